// trt-edge-run's jobs, one file each: each runs its request on the loaded module and prints
// its document (--json) or its lines; each returns the exit code.
#pragma once

#include "cli_options.h"
#include "generate.h"
#include "profiled_module.h"

namespace trt_edge::runner::cli {

/// run (--phase / --profile / --auto): one execution (job_run.cpp).
int run_one(const Options& o, ProfiledModule& module);
/// phases: every phase (or those named) at its profile's opt shape (job_phases.cpp).
int run_phases(const Options& o, ProfiledModule& module);
/// load: what the loaded bundle would run as, and the process's peak RSS (job_load.cpp).
int report_load(const Options& o, const ProfiledModule& module);
/// generate (job_generate.cpp).
int run_generate(const Options& o, ProfiledModule& module, const GenerationPlan& plan);
/// serve: the engine protocol on stdin/stdout, docs/engine-protocol.md (job_serve.cpp).
int run_serve(const Options& o, ProfiledModule& module);
/// version (job_version.cpp).
int print_version(const Options& o);

}  // namespace trt_edge::runner::cli
