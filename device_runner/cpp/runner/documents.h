// The parts every JSON document of trt-edge-run shares (--json, and --serve's events):
// the head ("interface", "ok", "runner"), the bundle's facts, tensor lists, the error
// document. Each job (jobs.h) adds its own fields.
#pragma once

#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bundle.h"
#include "cli_options.h"
#include "errors.h"
#include "npy.h"
#include "profiled_module.h"

namespace trt_edge::runner::cli {

using Json = nlohmann::ordered_json;

/// The version of the JSON documents; bumped when a field changes meaning or goes.
inline constexpr int kInterfaceVersion = 1;

/// The "runner" object: name, version, arch, ExecuTorch version, backends, capabilities.
Json runner_facts();
/// "[1, 2, 3]".
std::string shape_text(const std::vector<int64_t>& shape);
/// "auto", "pinned(N)" or "default".
std::string request_text(const Request& r);
/// [{"name", "shape", "dtype"}] of `arrays`, named by `specs`.
Json tensors_json(const std::vector<TensorSpec>& specs, const std::vector<Array>& arrays);
double elapsed_ms(std::chrono::steady_clock::time_point since);
/// The name of profile `profile`, or "" when it has none.
std::string profile_name(const Bundle& b, int64_t profile);
/// The fields every successful document starts with (after "interface", "ok", "runner").
Json bundle_json(const ProfiledModule& module, const Options& o);
/// One line of JSON; bytes that are not UTF-8 (a file name) become U+FFFD, never an exception.
std::string dumped(const Json& doc);
/// {"interface", "ok", "runner"}.
Json document_head(bool ok);
/// The "error" object: kind, exit code, message, and where (file, input, phase, problems).
Json error_json(const RunnerError& e);
/// The JSON error document on stdout.
void print_error_json(const RunnerError& e);

}  // namespace trt_edge::runner::cli
