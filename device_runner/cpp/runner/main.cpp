// trt-edge-run: the C++ runner's command line.
//
//   trt-edge-run --bundle DIR (--phase P | --profile N | --auto) [--dims sym=v ...]
//                [--inputs DIR] [--outputs DIR] [--bench N] [--json]
//                [--no-verify] [--ignore-policy]
//
// --inputs DIR holds one <input name>.npy per bundle input (np.save); without it,
// inputs are deterministic (integer inputs at the low end of their values range,
// floats 0) and sized by --dims or the requested profile's opt. --outputs DIR
// receives one <output name>.npy per output. --bench N times N executions
// after a warm-up, interleaving the runner's execute with a raw Module::execute
// on the same inputs, and reports both (the runner's overhead).
// Exit codes: 0 ran, 1 the bundle or runtime failed, 2 bad request or inputs.
// XNNPACK's CPU-probe info lines (cpuinfo_utils.cpp) are hidden unless
// TRT_EDGE_RUNTIME_LOGS=1; every other runtime log line is printed.
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
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "bundle.h"
#include "npy.h"
#include "profiled_module.h"

namespace {

using trt_edge::OptimizationProfileGuard;
using trt_edge::Request;
using trt_edge::RequestKind;
using namespace trt_edge::runner;

struct Options {
  std::string bundle;
  std::optional<std::string> phase;
  std::optional<int64_t> profile;
  bool automatic = false;
  std::map<std::string, int64_t> dims;
  std::string inputs;
  std::string outputs;
  int bench = 0;
  bool json = false;
  bool verify = true;
  bool honour_policy = true;
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
    "usage: trt-edge-run --bundle DIR (--phase P | --profile N | --auto) [--dims sym=v ...]\n"
    "                    [--inputs DIR] [--outputs DIR] [--bench N] [--json] [--no-verify]\n"
    "                    [--ignore-policy]\n";

// "--bench 5", or "--dims seq=5" when the flag names a symbol (ends with '=').
std::string shown(const std::string& flag, const std::string& text) {
  return flag + (!flag.empty() && flag.back() == '=' ? "" : " ") + text;
}

int64_t parse_int(const std::string& text, const std::string& flag) {
  try {
    size_t used = 0;
    const long long v = std::stoll(text, &used);
    if (used != text.size()) throw std::invalid_argument(text);
    return v;
  } catch (const std::exception&) {
    throw RunnerError(shown(flag, text) + ": expected an integer", 2);
  }
}

// An integer flag that must lie in [low, high]: a count or size outside it is refused
// with the flag, the value and the range, rather than silently clamped or run once.
int64_t parse_int_in(const std::string& text, const std::string& flag, int64_t low, int64_t high,
                     const std::string& why) {
  const int64_t v = parse_int(text, flag);
  if (v < low || v > high) {
    throw RunnerError(shown(flag, text) + ": must be between " + std::to_string(low) + " and " +
                          std::to_string(high) + " (" + why + ")",
                      2);
  }
  return v;
}

Options parse(int argc, char** argv) {
  Options o;
  int requests = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw RunnerError(a + " needs a value\n" + kUsage, 2);
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
    } else if (a == "--dims") {
      while (i + 1 < argc && std::string(argv[i + 1]).rfind("--", 0) != 0) {
        const std::string item = argv[++i];
        const auto eq = item.find('=');
        if (eq == std::string::npos) throw RunnerError("--dims " + item + ": expected SYM=INT", 2);
        o.dims[item.substr(0, eq)] =
            parse_int_in(item.substr(eq + 1), "--dims " + item.substr(0, eq + 1), 1,
                         std::numeric_limits<int32_t>::max(), "a dimension size");
      }
    } else if (a == "--inputs") {
      o.inputs = next();
    } else if (a == "--outputs") {
      o.outputs = next();
    } else if (a == "--bench") {
      o.bench = static_cast<int>(parse_int_in(next(), "--bench", 1, 1000000000,
                                              "the number of timed executions"));
    } else if (a == "--json") {
      o.json = true;
    } else if (a == "--no-verify") {
      o.verify = false;
    } else if (a == "--ignore-policy") {
      o.honour_policy = false;
    } else if (a == "--help" || a == "-h") {
      std::cout << kUsage;
      std::exit(0);
    } else {
      throw RunnerError("unknown argument " + a + "\n" + kUsage, 2);
    }
  }
  if (o.bundle.empty()) throw RunnerError(std::string("--bundle is required\n") + kUsage, 2);
  if (requests != 1) {
    throw RunnerError(std::string("pass exactly one of --phase, --profile, --auto\n") + kUsage, 2);
  }
  if (o.profile && *o.profile < 0) {
    throw RunnerError("--profile " + std::to_string(*o.profile) +
                          ": a profile index is never negative; use --auto for shape-based "
                          "selection",
                      2);
  }
  return o;
}

std::vector<Array> load_inputs(const Options& o, const Bundle& bundle, const Request& request) {
  std::vector<Array> inputs;
  if (!o.inputs.empty()) {
    for (const auto& spec : bundle.inputs) {
      const std::string path = o.inputs + "/" + spec.name + ".npy";
      if (!std::filesystem::exists(path)) {
        throw RunnerError(path + ": missing; --inputs DIR needs one <input name>.npy per input", 2);
      }
      try {
        inputs.push_back(read_npy(path));
      } catch (const std::runtime_error& e) {
        throw RunnerError(e.what(), 2);
      }
    }
    return inputs;
  }
  std::map<std::string, int64_t> symbols;
  if (!bundle.profiles.empty()) {
    size_t index = 0;
    if (request.kind == RequestKind::kPinned &&
        request.index < static_cast<int64_t>(bundle.profiles.size())) {
      index = static_cast<size_t>(request.index);
    }
    for (const auto& [sym, range] : bundle.profiles[index].dims) symbols[sym] = range.opt;
  }
  for (const auto& [sym, value] : o.dims) {
    if (!symbols.count(sym)) {
      throw RunnerError("--dims " + sym + "=" + std::to_string(value) +
                            ": the bundle has no symbol '" + sym + "'",
                        2);
    }
    symbols[sym] = value;
  }
  for (const auto& spec : bundle.inputs) {
    Array a;
    a.dtype = spec.dtype;
    a.shape = bundle.shape_of(spec, symbols);
    const size_t size = dtype_size(spec.dtype);
    if (size == 0) throw RunnerError("input '" + spec.name + "': unsupported dtype " + spec.dtype, 2);
    a.data.assign(static_cast<size_t>(a.numel()) * size, 0);
    if (spec.values && spec.values->first != 0 && spec.dtype == "int64") {
      auto* p = reinterpret_cast<int64_t*>(a.data.data());
      std::fill(p, p + a.numel(), spec.values->first);
    }
    inputs.push_back(std::move(a));
  }
  return inputs;
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
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

int run(const Options& o) {
  Bundle bundle = read_bundle(o.bundle);
  if (o.verify) verify_files(bundle);
  ProfiledModule module(std::move(bundle), o.honour_policy);
  const Bundle& b = module.bundle();
  const Request request = o.phase     ? module.request_for_phase(*o.phase)
                          : o.profile ? Request::pinned(*o.profile)
                                      : Request::automatic();
  const std::vector<Array> inputs = load_inputs(o, b, request);

  // The guard is what an application writes around its call: the request lives
  // on this thread for the scope, and the module resolves it per execution.
  auto scoped = [&](auto&& body) {
    if (request.kind == RequestKind::kAuto) {
      auto guard = OptimizationProfileGuard::automatic();
      return body();
    }
    OptimizationProfileGuard guard(request.index);
    return body();
  };
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  RunResult result = scoped([&] { return module.execute(inputs); });
  const double first_ms = std::chrono::duration<double, std::milli>(clock::now() - t0).count();

  std::vector<double> runner_us, raw_us, overhead_us, copy_us;
  if (o.bench > 0) {
    for (int i = 0; i < 3; ++i) module.execute_raw(inputs);
    scoped([&] {
      for (int i = 0; i < o.bench; ++i) {
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
  if (!o.outputs.empty()) {
    std::filesystem::create_directories(o.outputs);
    for (size_t i = 0; i < result.outputs.size(); ++i) {
      const std::string name = i < b.outputs.size() ? b.outputs[i].name : "output_" + std::to_string(i);
      write_npy(o.outputs + "/" + name + ".npy", result.outputs[i]);
    }
  }
  const std::string profile_name = b.profiles[static_cast<size_t>(result.profile)].name;
  if (o.json) {
    std::ostringstream js;
    js << std::setprecision(6) << "{\"bundle\": \"" << b.dir << "\", \"mode\": \""
       << module.mode() << "\", \"request\": \"" << request_text(request)
       << "\", \"profile\": " << result.profile << ", \"profile_name\": \"" << profile_name
       << "\", \"outcome\": \"" << trt_edge::to_string(result.outcome)
       << "\", \"latency_ms\": " << first_ms << ", \"digests_verified\": "
       << (o.verify && verifies_digests() ? "true" : "false") << ", \"outputs\": [";
    for (size_t i = 0; i < result.outputs.size(); ++i) {
      js << (i ? ", " : "") << "{\"name\": \"" << (i < b.outputs.size() ? b.outputs[i].name : "")
         << "\", \"shape\": " << shape_text(result.outputs[i].shape) << ", \"dtype\": \""
         << result.outputs[i].dtype << "\"}";
    }
    js << "]";
    if (o.bench > 0) {
      js << ", \"bench\": {\"iterations\": " << o.bench
         << ", \"runner_us_p50\": " << percentile(runner_us, 0.5)
         << ", \"runner_us_p90\": " << percentile(runner_us, 0.9)
         << ", \"runner_us_p99\": " << percentile(runner_us, 0.99)
         << ", \"raw_execute_us_p50\": " << percentile(raw_us, 0.5)
         << ", \"runner_work_us_p50\": " << percentile(overhead_us, 0.5)
         << ", \"output_copy_us_p50\": " << percentile(copy_us, 0.5) << "}";
    }
    js << "}";
    std::cout << js.str() << "\n";
    return 0;
  }
  std::cout << b.name << " " << b.version << ": profile " << result.profile << " (" << profile_name
            << ") for request " << request_text(request) << ", " << module.mode()
            << " mode, " << std::fixed << std::setprecision(3) << first_ms << " ms\n";
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

}  // namespace

int main(int argc, char** argv) {
  if (!runtime_logs_wanted()) {
    executorch::runtime::register_pal(
        executorch::runtime::PalImpl::create(emit_runtime_log, __FILE__));
  }
  try {
    return run(parse(argc, argv));
  } catch (const RunnerError& e) {
    std::cerr << "trt-edge-run: error: " << e.what() << "\n";
    return e.exit_code();
  } catch (const std::exception& e) {
    std::cerr << "trt-edge-run: error: " << e.what() << "\n";
    return 1;
  }
}
