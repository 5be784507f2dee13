// trt-edge-run: the C++ runner's command line, and its machine interface.
//
// One execution under a request, every phase of the runtime policy timed (what a
// device agent's smoke run and health check need), or a benchmark. `kHelp` below is
// the documentation of the interface (docs/runner-interface.md repeats it): the
// JSON document printed with --json, versioned by its "interface" field, and the
// exit code of each failure kind (errors.h). XNNPACK's CPU-probe info lines
// (cpuinfo_utils.cpp) are hidden unless TRT_EDGE_RUNTIME_LOGS=1; every other
// runtime log line is printed on stderr.
#include <executorch/runtime/backend/interface.h>
#include <executorch/runtime/platform/platform.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <limits>
#include <map>
#include <new>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "bundle.h"
#include "generate.h"
#include "npy.h"
#include "profiled_module.h"
#include "random_inputs.h"
#include "stage.h"

#ifndef TRT_EDGE_RUNNER_VERSION
#define TRT_EDGE_RUNNER_VERSION "unknown"
#endif
#ifndef TRT_EDGE_EXECUTORCH_VERSION
#define TRT_EDGE_EXECUTORCH_VERSION "unknown"
#endif

namespace {

using trt_edge::Request;
using trt_edge::RequestKind;
using namespace trt_edge::runner;
using Json = nlohmann::ordered_json;

/// The version of the JSON documents below; bumped when a field changes meaning or goes.
constexpr int kInterfaceVersion = 1;

struct Options {
  std::string bundle;
  std::optional<std::string> phase;
  std::optional<int64_t> profile;
  bool automatic = false;
  std::optional<std::vector<std::string>> phases;  ///< --phases: empty vector = all
  std::map<std::string, int64_t> dims;
  std::string inputs;
  std::string outputs;
  uint64_t seed = 0;
  int runs = 3;
  int warmup = 1;
  bool runs_given = false;
  int bench = 0;
  bool json = false;
  bool progress = false;
  bool verify = true;
  bool honour_policy = true;
  bool version = false;
  bool load_only = false;
  bool check_values = false;
  bool generate = false;
  std::vector<int64_t> prompt_ids;  ///< --prompt-ids (with --generate)
  bool prompt_given = false;
  int64_t max_new_tokens = 16;
  bool max_new_tokens_given = false;
};

// The ExecuTorch log sink: drops the XNNPACK CPU probe's informational lines (what
// /sys files it could not read, printed at every backend init on x86) and prints
// everything else like the default POSIX sink does. Errors are never dropped.
void emit_runtime_log(et_timestamp_t /*timestamp*/, et_pal_log_level_t level, const char* filename,
                      const char* /*function*/, size_t line, const char* message, size_t length) {
  const char* base = std::strrchr(filename, '/');
  base = base != nullptr ? base + 1 : filename;
  const bool informational = level == kInfo || level == kDebug;
  if (informational && std::strcmp(base, "cpuinfo_utils.cpp") == 0) return;
  std::cerr << static_cast<char>(level) << " executorch:" << base << ":" << line << "] "
            << std::string(message, length) << "\n";
}

bool runtime_logs_wanted() {
  const char* env = std::getenv("TRT_EDGE_RUNTIME_LOGS");
  if (env == nullptr) return false;
  const std::string v(env);
  return v == "1" || v == "true" || v == "yes" || v == "on";
}

const char* kUsage =
    "usage: trt-edge-run --bundle DIR (--phase P | --profile N | --auto | --phases all|P,Q |\n"
    "                    --load) [--dims sym=v ...] [--seed S] [--inputs DIR [--check-values]]\n"
    "                    [--outputs DIR]\n"
    "                    [--runs N] [--warmup N] [--bench N] [--json] [--progress]\n"
    "                    [--no-verify] [--ignore-policy]\n"
    "       trt-edge-run --bundle DIR --generate --prompt-ids 1,2,3 [--max-new-tokens N]\n"
    "                    [--json] [--progress] [--no-verify] [--ignore-policy]\n"
    "       trt-edge-run --version [--json]\n";

const char* kHelp = R"(
Run a trt-edge bundle with the ExecuTorch runtime, applying its profile policy.

Requests (exactly one):
  --phase P          a phase of the bundle's runtime policy (e.g. decode)
  --profile N        pin profile N
  --auto             select from the input shapes (sticky first-fit)
  --phases all|P,Q   every phase of the runtime policy (or those named), each at its
                     profile's opt shape: --warmup N untimed runs (default 1), then
                     --runs N timed ones (default 3); reports median/min/max ms per phase
  --load             check and load the bundle, report its mode; execute nothing
  --generate         greedy generation: --prompt-ids 1,2,3 (token ids; no tokenizer here)
                     under the 'prefill' phase, in chunks when longer than its profile
                     takes, then each new token under 'decode', until an eos id or
                     --max-new-tokens N (default 16). A causal LM (bundle.json llm, KV
                     cache inside the program) or the tiny-LLM contract (caches passed
                     in and out); a request the cache cannot hold is refused first

Inputs: --inputs DIR holds one <input name>.npy per input (np.save); without it,
inputs are random, the same for the same --seed S (default 0): integer inputs drawn
from their declared values [low, high) (else [0, 2)), floats standard normal, sized
by --dims sym=v or else the opt of the profile the request names (profile 0's for
auto). --check-values refuses --inputs integers outside their declared values.
--outputs DIR receives <output name>.npy per output. --bench N times N
executions after a warm-up, next to a raw Module::execute on the same inputs.

--json prints one JSON document on stdout, also when the run fails:
  {"interface": 1, "ok": true, "runner": {...}, "bundle": DIR, "model": {...},
   "target": {"id", "arch"}, "mode": "emulated"|"native", "profile0_only": bool,
   "digests_verified": bool, then per request:
   --phase/--profile/--auto: "request", "profile", "profile_name", "outcome",
     "latency_ms", "inputs": [{"name","shape","dtype"}], "outputs": [...], "bench"
   --phases: "seed", "warmup", "runs", "phases": [{"phase", "request", "profile",
     "profile_name", "outcome", "inputs", "outputs", "first_ms", "median_ms",
     "min_ms", "max_ms", "runs_ms"}]
   --load: "phases": {phase: index or "auto"}, "profiles": [name, ...]
   --generate: "request": "generate", "contract": "causal_lm"|"tiny_llm",
     "prompt_ids", "max_new_tokens", "tokens", "stop": "eos"|"max_new_tokens",
     "steps": [{"phase", "profile", "start", "seq", "ms"}], "timings":
     {"prefill_ms", "time_to_first_token_ms", "decode_ms_per_token",
     "decode_tokens_per_s", "tokens_per_s", "total_ms"} (as trt-edge generate --json)}
  {"interface": 1, "ok": false, "runner": {...}, "error": {"kind", "exit_code",
   "message", and when known "file", "input", "phase", "problems": [{"kind",
   "path", "detail"}]}}
--progress prints `trt-edge-run: progress: STAGE` on stderr as each stage starts,
so a parent can name what was running if the process dies. A fatal signal prints
`trt-edge-run: fatal: SIGSEGV while STAGE`; the process still dies of it.
--version [--json]: version, architecture, ExecuTorch version, backends, interface.

Exit codes (the failure kind; "kind" in the JSON error):
  0  ok
)";

// "--bench 5", or "--dims seq=5" when the flag names a symbol (ends with '=').
std::string shown(const std::string& flag, const std::string& text) {
  return flag + (!flag.empty() && flag.back() == '=' ? "" : " ") + text;
}

RunnerError usage(const std::string& message) { return RunnerError(ErrorKind::kUsage, message); }

int64_t parse_int(const std::string& text, const std::string& flag) {
  try {
    size_t used = 0;
    const long long v = std::stoll(text, &used);
    if (used != text.size()) throw std::invalid_argument(text);
    return v;
  } catch (const std::exception&) {
    throw usage(shown(flag, text) + ": expected an integer");
  }
}

// An integer flag that must lie in [low, high]: a count or size outside it is refused
// with the flag, the value and the range, rather than silently clamped or run once.
int64_t parse_int_in(const std::string& text, const std::string& flag, int64_t low, int64_t high,
                     const std::string& why) {
  const int64_t v = parse_int(text, flag);
  if (v < low || v > high) {
    throw usage(shown(flag, text) + ": must be between " + std::to_string(low) + " and " +
                std::to_string(high) + " (" + why + ")");
  }
  return v;
}

std::vector<std::string> split_phases(const std::string& text) {
  if (text == "all") return {};
  std::vector<std::string> names;
  std::stringstream in(text);
  std::string name;
  while (std::getline(in, name, ',')) {
    if (name.empty()) throw usage("--phases " + text + ": expected all, or phase names P,Q");
    names.push_back(name);
  }
  if (names.empty()) throw usage("--phases needs all, or phase names P,Q");
  return names;
}

/// --prompt-ids 1,2,3: comma-separated non-negative integers, at least one.
std::vector<int64_t> parse_prompt_ids(const std::string& text) {
  std::vector<int64_t> ids;
  std::stringstream in(text);
  std::string part;
  while (std::getline(in, part, ',')) {
    if (part.empty()) {
      throw usage("--prompt-ids " + text + ": expected comma-separated integers, e.g. 1,2,3");
    }
    int64_t id = 0;
    try {
      id = parse_int(part, "--prompt-ids");
    } catch (const RunnerError&) {
      throw usage("--prompt-ids " + text + ": '" + part +
                  "' is not an integer; expected comma-separated token ids, e.g. 1,2,3");
    }
    if (id < 0) {
      throw usage("--prompt-ids " + text + ": " + part + " is negative; token ids are >= 0");
    }
    ids.push_back(id);
  }
  if (ids.empty() || text.back() == ',') {
    throw usage("--prompt-ids " + (text.empty() ? std::string("''") : text) +
                ": expected comma-separated token ids, e.g. 1,2,3");
  }
  return ids;
}

/// --generate runs its own phases on inputs it makes: it takes no other request and none
/// of the single-request flags; it needs --prompt-ids.
void check_generate_flags(const Options& o, int requests, bool warmup_given) {
  if (requests > 0) {
    throw usage("--generate runs the prompt under 'prefill' and each new token under 'decode' "
                "itself: it takes no --phase, --profile, --auto, --phases or --load");
  }
  if (!o.inputs.empty() || !o.outputs.empty() || o.bench > 0 || !o.dims.empty() ||
      o.check_values || o.runs_given || warmup_given) {
    throw usage("--generate makes its own inputs from --prompt-ids: it takes no --inputs, "
                "--outputs, --dims, --check-values, --bench, --runs or --warmup");
  }
  if (!o.prompt_given) throw usage("--generate needs --prompt-ids 1,2,3 (the prompt's token ids)");
}

Options parse(int argc, char** argv) {
  Options o;
  int requests = 0;
  bool warmup_given = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw usage(a + " needs a value");
      return argv[++i];
    };
    if (a == "--bundle") {
      o.bundle = next();
    } else if (a == "--phase") {
      o.phase = next();
      ++requests;
    } else if (a == "--profile") {
      o.profile = parse_int(next(), "--profile");
      ++requests;
    } else if (a == "--auto") {
      o.automatic = true;
      ++requests;
    } else if (a == "--phases") {
      o.phases = split_phases(next());
      ++requests;
    } else if (a == "--load") {
      o.load_only = true;
      ++requests;
    } else if (a == "--generate") {
      o.generate = true;
    } else if (a == "--prompt-ids") {
      o.prompt_ids = parse_prompt_ids(next());
      o.prompt_given = true;
    } else if (a == "--max-new-tokens") {
      o.max_new_tokens = parse_int_in(next(), "--max-new-tokens", 1,
                                      std::numeric_limits<int32_t>::max(), "tokens to generate");
      o.max_new_tokens_given = true;
    } else if (a == "--check-values") {
      o.check_values = true;
    } else if (a == "--dims") {
      while (i + 1 < argc && std::string(argv[i + 1]).rfind("--", 0) != 0) {
        const std::string item = argv[++i];
        const auto eq = item.find('=');
        if (eq == std::string::npos) throw usage("--dims " + item + ": expected SYM=INT");
        o.dims[item.substr(0, eq)] =
            parse_int_in(item.substr(eq + 1), "--dims " + item.substr(0, eq + 1), 1,
                         std::numeric_limits<int32_t>::max(), "a dimension size");
      }
    } else if (a == "--inputs") {
      o.inputs = next();
    } else if (a == "--outputs") {
      o.outputs = next();
    } else if (a == "--seed") {
      o.seed = static_cast<uint64_t>(parse_int_in(next(), "--seed", 0,
                                                  std::numeric_limits<int64_t>::max(), "a seed"));
    } else if (a == "--runs") {
      o.runs = static_cast<int>(
          parse_int_in(next(), "--runs", 1, 1000000, "timed runs per phase"));
      o.runs_given = true;
    } else if (a == "--warmup") {
      o.warmup = static_cast<int>(
          parse_int_in(next(), "--warmup", 0, 1000000, "untimed runs per phase"));
      warmup_given = true;
    } else if (a == "--bench") {
      o.bench = static_cast<int>(parse_int_in(next(), "--bench", 1, 1000000000,
                                              "the number of timed executions"));
    } else if (a == "--json") {
      o.json = true;
    } else if (a == "--progress") {
      o.progress = true;
    } else if (a == "--no-verify") {
      o.verify = false;
    } else if (a == "--ignore-policy") {
      o.honour_policy = false;
    } else if (a == "--version") {
      o.version = true;
    } else if (a == "--help" || a == "-h") {
      std::cout << kUsage << kHelp;
      for (const auto& row : kErrorKinds) {
        std::cout << "  " << exit_code(row.kind) << "  " << std::left << std::setw(18) << row.name
                  << " " << row.meaning << "\n";
      }
      std::cout << "  killed by a signal    a crash inside ExecuTorch (a malformed program); "
                   "the parent decides\n";
      std::exit(0);
    } else {
      throw usage("unknown argument " + a);
    }
  }
  if (o.version) return o;
  if (o.bundle.empty()) throw usage("--bundle is required");
  if (o.generate) {
    check_generate_flags(o, requests, warmup_given);
    return o;
  }
  if (o.prompt_given || o.max_new_tokens_given) {
    throw usage("--prompt-ids and --max-new-tokens go with --generate");
  }
  if (requests != 1) {
    throw usage("pass exactly one of --phase, --profile, --auto, --phases, --load");
  }
  if (o.profile && *o.profile < 0) {
    throw usage("--profile " + std::to_string(*o.profile) +
                ": a profile index is never negative; use --auto for shape-based selection");
  }
  if (o.phases || o.load_only) {
    if (!o.inputs.empty() || !o.outputs.empty() || o.bench > 0 || !o.dims.empty()) {
      throw usage(o.load_only ? "--load executes nothing: it takes no --inputs, --outputs, --dims "
                                "or --bench"
                              : "--phases runs every phase at its own profile's opt shape: it "
                                "takes no --inputs, --outputs, --dims or --bench");
    }
  }
  if (!o.phases && (o.runs_given || warmup_given)) {
    throw usage("--runs and --warmup go with --phases (for one request use --bench N)");
  }
  return o;
}

Json runner_facts() {
  Json backends = Json::array();
  const size_t count = executorch::runtime::get_num_registered_backends();
  for (size_t i = 0; i < count; ++i) {
    const auto name = executorch::runtime::get_backend_name(i);
    if (name.ok()) backends.push_back(*name);
  }
  return Json{{"name", "trt-edge-run"},
              {"version", TRT_EDGE_RUNNER_VERSION},
              {"arch", compiled_arch()},
              {"executorch", TRT_EDGE_EXECUTORCH_VERSION},
              {"native_profile_guard", native_actuator_available()},
              {"verifies_digests", verifies_digests()},
              {"backends", backends}};
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::vector<Array> read_inputs(const std::string& dir, const Bundle& bundle) {
  std::vector<Array> inputs;
  for (const auto& spec : bundle.inputs) {
    const std::string path = dir + "/" + spec.name + ".npy";
    if (!std::filesystem::exists(path)) {
      throw RunnerError(ErrorKind::kRequestRefused,
                        path + ": missing; --inputs DIR needs one <input name>.npy per input")
          .with_file(path)
          .with_input(spec.name);
    }
    try {
      inputs.push_back(read_npy(path));
    } catch (const std::runtime_error& e) {
      throw RunnerError(ErrorKind::kRequestRefused, e.what()).with_file(path).with_input(spec.name);
    }
  }
  return inputs;
}

/// --check-values: every integer input inside its declared values [low, high), or
/// RunnerError (kRequestRefused) naming the input, the element, its value and the range.
void check_values(const Bundle& bundle, const std::vector<Array>& inputs) {
  for (size_t i = 0; i < inputs.size() && i < bundle.inputs.size(); ++i) {
    const TensorSpec& spec = bundle.inputs[i];
    const Array& a = inputs[i];
    if (!spec.values || a.dtype != spec.dtype) continue;
    const auto [low, high] = *spec.values;
    auto at = [&](int64_t k) -> std::optional<int64_t> {
      if (a.dtype == "int64") return reinterpret_cast<const int64_t*>(a.data.data())[k];
      if (a.dtype == "int32") return reinterpret_cast<const int32_t*>(a.data.data())[k];
      if (a.dtype == "int16") return reinterpret_cast<const int16_t*>(a.data.data())[k];
      if (a.dtype == "int8") return reinterpret_cast<const int8_t*>(a.data.data())[k];
      if (a.dtype == "uint8") return a.data[static_cast<size_t>(k)];
      return std::nullopt;
    };
    for (int64_t k = 0; k < a.numel(); ++k) {
      const auto value = at(k);
      if (!value) break;
      if (*value >= low && *value < high) continue;
      std::vector<int64_t> index(a.shape.size(), 0);
      int64_t rest = k;
      for (size_t d = a.shape.size(); d-- > 0;) {
        index[d] = a.shape[d] ? rest % a.shape[d] : 0;
        rest = a.shape[d] ? rest / a.shape[d] : 0;
      }
      throw RunnerError(ErrorKind::kRequestRefused,
                        "input '" + spec.name + "'" + shape_text(index) + " = " +
                            std::to_string(*value) + " is outside its declared values [" +
                            std::to_string(low) + ", " + std::to_string(high) +
                            "); pass values in range (bundle io.inputs values)")
          .with_input(spec.name);
    }
  }
}

/// The symbols for made-up inputs: the opt of the profile `request` pins (0 otherwise),
/// then each --dims value (a symbol the bundle lacks is refused).
std::map<std::string, int64_t> symbols_for(const Options& o, const Bundle& bundle,
                                           const Request& request) {
  const int64_t index = request.kind == RequestKind::kPinned ? request.index : 0;
  std::map<std::string, int64_t> symbols = opt_symbols(bundle, index);
  for (const auto& [sym, value] : o.dims) {
    if (!symbols.count(sym)) {
      throw RunnerError(ErrorKind::kRequestRefused, "--dims " + sym + "=" + std::to_string(value) +
                                                        ": the bundle has no symbol '" + sym + "'");
    }
    symbols[sym] = value;
  }
  return symbols;
}

std::string request_text(const Request& r) {
  if (r.kind == RequestKind::kAuto) return "auto";
  if (r.kind == RequestKind::kPinned) return "pinned(" + std::to_string(r.index) + ")";
  return "default";
}


double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const size_t k = std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5));
  return v[k];
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

Json tensors_json(const std::vector<TensorSpec>& specs, const std::vector<Array>& arrays) {
  Json out = Json::array();
  for (size_t i = 0; i < arrays.size(); ++i) {
    out.push_back(Json{{"name", i < specs.size() ? specs[i].name : "output_" + std::to_string(i)},
                       {"shape", arrays[i].shape},
                       {"dtype", arrays[i].dtype}});
  }
  return out;
}

double elapsed_ms(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since).count();
}

std::string profile_name(const Bundle& b, int64_t profile) {
  return profile >= 0 && profile < static_cast<int64_t>(b.profiles.size())
             ? b.profiles[static_cast<size_t>(profile)].name
             : "";
}

Json or_null(const std::string& text) { return text.empty() ? Json(nullptr) : Json(text); }

/// The fields every successful document starts with (after "interface", "ok", "runner").
Json bundle_json(const ProfiledModule& module, const Options& o) {
  const Bundle& b = module.bundle();
  return Json{{"bundle", b.dir},
              {"model", Json{{"name", b.name}, {"version", b.version}}},
              {"target", Json{{"id", or_null(b.target_id)}, {"arch", or_null(b.target_arch)}}},
              {"mode", module.mode()},
              {"profile0_only", module.decision().profile0_only},
              {"digests_verified", o.verify && verifies_digests()}};
}

/// One line of JSON; bytes that are not UTF-8 (a file name) become U+FFFD, never an exception.
std::string dumped(const Json& doc) { return doc.dump(-1, ' ', false, Json::error_handler_t::replace); }

Json document_head(bool ok) {
  return Json{{"interface", kInterfaceVersion}, {"ok", ok}, {"runner", runner_facts()}};
}

void write_outputs(const Options& o, const Bundle& b, const RunResult& result) {
  enter_stage("writing outputs");
  try {
    std::filesystem::create_directories(o.outputs);
    for (size_t i = 0; i < result.outputs.size(); ++i) {
      const std::string name = i < b.outputs.size() ? b.outputs[i].name : "output_" + std::to_string(i);
      write_npy(o.outputs + "/" + name + ".npy", result.outputs[i]);
    }
  } catch (const std::exception& e) {
    throw RunnerError(ErrorKind::kOutputWrite, std::string("--outputs ") + o.outputs + ": " + e.what())
        .with_file(o.outputs);
  }
}

int run_one(const Options& o, ProfiledModule& module) {
  const Bundle& b = module.bundle();
  const Request request = o.phase     ? module.request_for_phase(*o.phase)
                          : o.profile ? Request::pinned(*o.profile)
                                      : Request::automatic();
  const std::vector<Array> inputs =
      o.inputs.empty() ? random_inputs(b, symbols_for(o, b, request), o.seed) : read_inputs(o.inputs, b);
  if (o.check_values) check_values(b, inputs);

  enter_stage(o.phase ? "running phase " + *o.phase : "running request " + request_text(request));
  const auto t0 = std::chrono::steady_clock::now();
  RunResult result = guarded(request, [&] { return module.execute(inputs); });
  const double first_ms = elapsed_ms(t0);

  std::vector<double> runner_us, raw_us, overhead_us, copy_us;
  if (o.bench > 0) {
    enter_stage("benchmarking");
    for (int i = 0; i < 3; ++i) module.execute_raw(inputs);
    guarded(request, [&] {
      for (int i = 0; i < o.bench; ++i) {
        using clock = std::chrono::steady_clock;
        auto a = clock::now();
        module.execute(inputs);
        auto m = clock::now();
        module.execute_raw(inputs);
        auto z = clock::now();
        runner_us.push_back(std::chrono::duration<double, std::micro>(m - a).count());
        overhead_us.push_back(module.last_overhead_us());
        copy_us.push_back(module.last_copy_us());
        raw_us.push_back(std::chrono::duration<double, std::micro>(z - m).count());
      }
      return 0;
    });
  }
  if (!o.outputs.empty()) write_outputs(o, b, result);
  const std::string name = profile_name(b, result.profile);
  if (o.json) {
    Json doc = document_head(true);
    doc.update(bundle_json(module, o));
    doc["request"] = request_text(request);
    doc["profile"] = result.profile;
    doc["profile_name"] = name;
    doc["outcome"] = trt_edge::to_string(result.outcome);
    doc["latency_ms"] = first_ms;
    doc["inputs"] = tensors_json(b.inputs, inputs);
    doc["outputs"] = tensors_json(b.outputs, result.outputs);
    if (o.bench > 0) {
      doc["bench"] = Json{{"iterations", o.bench},
                          {"runner_us_p50", percentile(runner_us, 0.5)},
                          {"runner_us_p90", percentile(runner_us, 0.9)},
                          {"runner_us_p99", percentile(runner_us, 0.99)},
                          {"raw_execute_us_p50", percentile(raw_us, 0.5)},
                          {"runner_work_us_p50", percentile(overhead_us, 0.5)},
                          {"output_copy_us_p50", percentile(copy_us, 0.5)}};
    }
    std::cout << dumped(doc) << "\n";
    return 0;
  }
  std::cout << b.name << " " << b.version << ": profile " << result.profile << " (" << name
            << ") for request " << request_text(request) << ", " << module.mode() << " mode, "
            << std::fixed << std::setprecision(3) << first_ms << " ms\n";
  for (size_t i = 0; i < result.outputs.size(); ++i) {
    std::cout << "  output " << (i < b.outputs.size() ? b.outputs[i].name : "?") << ": shape "
              << shape_text(result.outputs[i].shape) << " " << result.outputs[i].dtype << "\n";
  }
  if (o.bench > 0) {
    std::cout << "  bench " << o.bench << ": runner p50 " << percentile(runner_us, 0.5)
              << " us, p90 " << percentile(runner_us, 0.9) << " us, p99 "
              << percentile(runner_us, 0.99) << " us; raw Module::execute p50 "
              << percentile(raw_us, 0.5) << " us; runner's own work p50 "
              << percentile(overhead_us, 0.5) << " us (+ output copy p50 "
              << percentile(copy_us, 0.5) << " us)\n";
  }
  return 0;
}

/// --phases: every phase (or those named) at its profile's opt shape, warm-up then timed runs.
int run_phases(const Options& o, ProfiledModule& module) {
  const Bundle& b = module.bundle();
  std::vector<std::string> names = *o.phases;
  if (names.empty()) {
    for (const auto& [phase, target] : b.phases) names.push_back(phase);
  }
  if (names.empty()) {
    throw RunnerError(ErrorKind::kRequestRefused,
                      b.dir + "/bundle.json: runtime.phases is empty: no phase to run");
  }
  Json phases = Json::array();
  for (const auto& phase : names) {
    try {
      const Request request = module.request_for_phase(phase);
      const std::vector<Array> inputs = random_inputs(b, symbols_for(o, b, request), o.seed);
      enter_stage("running phase " + phase);
      RunResult result;
      double first_ms = 0.0;
      std::vector<double> runs_ms;
      guarded(request, [&] {
        for (int i = 0; i < o.warmup + o.runs; ++i) {
          const auto t0 = std::chrono::steady_clock::now();
          result = module.execute(inputs);
          const double ms = elapsed_ms(t0);
          if (i == 0) first_ms = ms;
          if (i >= o.warmup) runs_ms.push_back(ms);
        }
        return 0;
      });
      phases.push_back(Json{{"phase", phase},
                            {"request", request_text(request)},
                            {"profile", result.profile},
                            {"profile_name", profile_name(b, result.profile)},
                            {"outcome", trt_edge::to_string(result.outcome)},
                            {"inputs", tensors_json(b.inputs, inputs)},
                            {"outputs", tensors_json(b.outputs, result.outputs)},
                            {"first_ms", first_ms},
                            {"median_ms", median(runs_ms)},
                            {"min_ms", *std::min_element(runs_ms.begin(), runs_ms.end())},
                            {"max_ms", *std::max_element(runs_ms.begin(), runs_ms.end())},
                            {"runs_ms", runs_ms}});
    } catch (RunnerError& e) {
      if (e.phase().empty()) e.with_phase(phase);
      throw;
    }
  }
  if (o.json) {
    Json doc = document_head(true);
    doc.update(bundle_json(module, o));
    doc["seed"] = o.seed;
    doc["warmup"] = o.warmup;
    doc["runs"] = o.runs;
    doc["phases"] = phases;
    std::cout << dumped(doc) << "\n";
    return 0;
  }
  std::cout << b.name << " " << b.version << ": " << module.mode() << " mode, " << o.warmup
            << " warm-up + " << o.runs << " timed run(s) per phase\n";
  for (const auto& p : phases) {
    std::cout << "  " << p["phase"].get<std::string>() << ": profile " << p["profile"].get<int64_t>()
              << " (" << p["profile_name"].get<std::string>() << "), median " << std::fixed
              << std::setprecision(3) << p["median_ms"].get<double>() << " ms (min "
              << p["min_ms"].get<double>() << ", max " << p["max_ms"].get<double>() << ")\n";
  }
  return 0;
}

/// --load: the bundle passed every check and its program loaded; what it would run as.
int report_load(const Options& o, const ProfiledModule& module) {
  const Bundle& b = module.bundle();
  Json phases = Json::object();
  for (const auto& [phase, target] : b.phases) {
    phases[phase] = target ? Json(*target) : Json("auto");
  }
  Json profiles = Json::array();
  for (const auto& profile : b.profiles) profiles.push_back(profile.name);
  if (o.json) {
    Json doc = document_head(true);
    doc.update(bundle_json(module, o));
    doc["phases"] = phases;
    doc["profiles"] = profiles;
    std::cout << dumped(doc) << "\n";
    return 0;
  }
  std::cout << b.name << " " << b.version << ": loads; " << module.mode() << " mode"
            << (module.decision().profile0_only ? " (profile 0 only)" : "") << ", "
            << b.profiles.size() << " profile(s), " << b.phases.size() << " phase(s)\n";
  return 0;
}

/// --generate: greedy generation over the loaded module (generate.h), then its document.
int run_generate(const Options& o, ProfiledModule& module, const GenerationPlan& plan) {
  const GenerationResult result = greedy_generate(module, plan, o.prompt_ids, o.max_new_tokens);
  if (o.json) {
    Json doc = document_head(true);
    doc.update(bundle_json(module, o));
    doc.update(generation_json(plan, result, o.max_new_tokens));
    std::cout << dumped(doc) << "\n";
    return 0;
  }
  std::cout << "tokens: ";
  for (size_t i = 0; i < result.tokens.size(); ++i) std::cout << (i ? "," : "") << result.tokens[i];
  std::cout << "\n";
  for (const auto& line : generation_summary(result, module.mode())) std::cerr << line << "\n";
  return 0;
}

int print_version(const Options& o) {
  const Json facts = runner_facts();
  if (o.json) {
    Json doc{{"interface", kInterfaceVersion}, {"ok", true}, {"runner", facts}};
    std::cout << dumped(doc) << "\n";
    return 0;
  }
  std::cout << "trt-edge-run " << TRT_EDGE_RUNNER_VERSION << " (" << compiled_arch()
            << ", ExecuTorch " << TRT_EDGE_EXECUTORCH_VERSION << ", interface " << kInterfaceVersion
            << "; native TensorRT profile guard: " << (native_actuator_available() ? "yes" : "no")
            << ")\n";
  return 0;
}

int run(const Options& o) {
  if (o.version) return print_version(o);
  print_progress(o.progress);
  enter_stage("reading bundle.json");
  Bundle bundle = read_bundle(o.bundle);
  // A generation request the bundle cannot serve is refused before any other work.
  const std::optional<GenerationPlan> plan =
      o.generate ? std::optional(plan_generation(bundle, o.prompt_ids, o.max_new_tokens))
                 : std::nullopt;
  if (o.verify) {
    enter_stage("checking the bundle's files");
    verify_files(bundle);
  }
  check_target(bundle);
  enter_stage("loading model.pte");
  ProfiledModule module(std::move(bundle), o.honour_policy);
  if (o.load_only) return report_load(o, module);
  if (plan) return run_generate(o, module, *plan);
  return o.phases ? run_phases(o, module) : run_one(o, module);
}

/// The JSON error document: kind, exit code, message, and where (file, input, phase).
void print_error_json(const RunnerError& e) {
  Json error{{"kind", to_string(e.kind())}, {"exit_code", e.exit_code()}, {"message", e.what()}};
  if (!e.file().empty()) error["file"] = e.file();
  if (!e.input().empty()) error["input"] = e.input();
  if (!e.phase().empty()) error["phase"] = e.phase();
  if (const auto* problems = dynamic_cast<const BundleProblemsError*>(&e)) {
    Json list = Json::array();
    for (const auto& p : problems->problems()) {
      list.push_back(Json{{"kind", to_string(p.kind)}, {"path", p.path}, {"detail", p.detail}});
    }
    error["problems"] = list;
  }
  Json doc = document_head(false);
  doc["error"] = error;
  std::cout << dumped(doc) << "\n";
}

int fail(const RunnerError& e, bool json) {
  if (json) print_error_json(e);
  std::cerr << "trt-edge-run: error: " << e.what() << "\n";
  // The synopsis helps a person at a terminal; with --json a parent reads the document.
  if (e.kind() == ErrorKind::kUsage && !json) std::cerr << kUsage;
  return e.exit_code();
}

}  // namespace

int main(int argc, char** argv) {
  install_fatal_signal_report();
  if (!runtime_logs_wanted()) {
    executorch::runtime::register_pal(
        executorch::runtime::PalImpl::create(emit_runtime_log, __FILE__));
  }
  bool json = false;  // known before parsing, so a usage error is a JSON document too
  for (int i = 1; i < argc; ++i) json = json || std::strcmp(argv[i], "--json") == 0;
  try {
    return run(parse(argc, argv));
  } catch (const RunnerError& e) {
    return fail(e, json);
  } catch (const std::bad_alloc&) {
    return fail(RunnerError(ErrorKind::kInternal, "out of memory"), json);
  } catch (const std::exception& e) {
    return fail(RunnerError(ErrorKind::kInternal, e.what()), json);
  }
}
