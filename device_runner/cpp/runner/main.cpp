// trt-edge-run: the C++ runner's command line, and its machine interface.
//
// One subcommand per job (cli_table.cpp): run (one execution under a request, or a
// benchmark), phases (every phase of the runtime policy timed: what a device agent's smoke
// run and health check need), load, generate, serve, version. `--help` (help_text.cpp) is
// the documentation of the interface (docs/runner-interface.md repeats it): the JSON
// document printed with --json, versioned by its "interface" field, and the exit code of
// each failure kind (errors.h). XNNPACK's CPU-probe info lines
// (cpuinfo_utils.cpp) are hidden unless TRT_EDGE_RUNTIME_LOGS=1; every other
// runtime log line is printed on stderr.
#include <cstring>
#include <executorch/extension/threadpool/threadpool_guard.h>
#include <iostream>
#include <new>
#include <optional>

#include "bundle.h"
#include "cli_options.h"
#include "documents.h"
#include "generate.h"
#include "help_text.h"
#include "jobs.h"
#include "profiled_module.h"
#include "runtime_log.h"
#include "stage.h"

namespace {

using namespace trt_edge::runner;
using namespace trt_edge::runner::cli;

// The job of a loaded module: every subcommand but version.
int run_loaded(const Options& o, ProfiledModule& module, const std::optional<GenerationPlan>& plan) {
  switch (o.command) {
    case Command::kLoad: return report_load(o, module);
    case Command::kServe: return run_serve(o, module);
    case Command::kGenerate: return run_generate(o, module, *plan);
    case Command::kPhases: return run_phases(o, module);
    case Command::kRun:
    case Command::kVersion: break;
  }
  return run_one(o, module);
}

int run(const Options& o) {
  if (o.command == Command::kVersion) return print_version(o);
  print_progress(o.progress);
  enter_stage("reading bundle.json");
  Bundle bundle = read_bundle(o.bundle);
  // A generation request the bundle cannot serve is refused before any other work.
  const std::optional<GenerationPlan> plan =
      o.command == Command::kGenerate
          ? std::optional(plan_generation(bundle, o.prompt_ids, o.max_new_tokens))
          : std::nullopt;
  if (o.verify) {
    enter_stage("checking the bundle's files");
    verify_files(bundle);
  }
  check_target(bundle);
  // --single-thread: no thread pool for this thread, from the load (XNNPACK takes the pool
  // when it builds its runtime) through every execution (all on this thread).
  std::optional<executorch::extension::threadpool::NoThreadPoolGuard> single_thread;
  if (o.single_thread) single_thread.emplace();
  enter_stage("loading model.pte");
  ProfiledModule module(std::move(bundle), o.honour_policy);
  return run_loaded(o, module, plan);
}

int fail(const RunnerError& e, bool json) {
  if (json) print_error_json(e);
  std::cerr << "trt-edge-run: error: " << e.what() << "\n";
  // The synopsis helps a person at a terminal; with --json a parent reads the document.
  if (e.kind() == ErrorKind::kUsage && !json) print_usage(std::cerr);
  return e.exit_code();
}

}  // namespace

int main(int argc, char** argv) {
  install_fatal_signal_report();
  install_runtime_log_sink();
  bool json = false;  // known before parsing, so a usage error is a JSON document too
  for (int i = 1; i < argc; ++i) {
    // serve speaks JSON lines: a failure to start is the --json error document too.
    json = json || std::strcmp(argv[i], "--json") == 0 || std::strcmp(argv[i], "--serve") == 0 ||
           (i == 1 && std::strcmp(argv[i], "serve") == 0);
  }
  try {
    return run(parse_command_line(argc, argv));
  } catch (const RunnerError& e) {
    return fail(e, json);
  } catch (const std::bad_alloc&) {
    return fail(RunnerError(ErrorKind::kInternal, "out of memory"), json);
  } catch (const std::exception& e) {
    return fail(RunnerError(ErrorKind::kInternal, e.what()), json);
  }
}

