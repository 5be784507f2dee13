// trt-edge-run-threads BUNDLE: two threads share one ProfiledModule, each under its own
// guard (thread A pins the first phase's profile with its opt shape, thread B the
// last phase's), many times, interleaved. Checks that every execution ran on the
// profile its own thread asked for (guards are thread-local) and that the shared
// module, serialised by its mutex, returns the same outputs as a lone execution.
// Exit 0 when all agree; 1 with the first disagreement on stderr.
#include <atomic>
#include <cstring>
#include <iostream>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bundle.h"
#include "profiled_module.h"

using namespace trt_edge::runner;

namespace {

std::vector<Array> inputs_for(const Bundle& b, size_t profile) {
  std::map<std::string, int64_t> symbols;
  for (const auto& [sym, range] : b.profiles[profile].dims) symbols[sym] = range.opt;
  std::vector<Array> inputs;
  for (const auto& spec : b.inputs) {
    Array a;
    a.dtype = spec.dtype;
    a.shape = b.shape_of(spec, symbols);
    a.data.assign(static_cast<size_t>(a.numel()) * dtype_size(spec.dtype), 0);
    for (size_t i = 0; i < a.data.size(); ++i) {
      if (spec.dtype == "float32" && i % 4 == 3) a.data[i] = 0x3f;  // ~0.5-ish floats
    }
    inputs.push_back(std::move(a));
  }
  return inputs;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: trt-edge-run-threads BUNDLE\n";
    return 2;
  }
  try {
    Bundle bundle = read_bundle(argv[1]);
    if (bundle.profiles.size() < 2) {
      std::cerr << "trt-edge-run-threads: needs a bundle with at least two profiles\n";
      return 2;
    }
    ProfiledModule module(bundle, true);
    const int64_t last = static_cast<int64_t>(bundle.profiles.size()) - 1;
    const std::vector<Array> in_first = inputs_for(bundle, 0);
    const std::vector<Array> in_last = inputs_for(bundle, static_cast<size_t>(last));
    RunResult want_first, want_last;
    {
      trt_edge::OptimizationProfileGuard guard(0);
      want_first = module.execute(in_first);
    }
    {
      trt_edge::OptimizationProfileGuard guard(last);
      want_last = module.execute(in_last);
    }
    std::atomic<int> failures{0};
    std::string first_failure;
    std::mutex failure_mutex;
    auto worker = [&](int64_t profile, const std::vector<Array>& inputs, const RunResult& want) {
      trt_edge::OptimizationProfileGuard guard(profile);
      for (int i = 0; i < 25; ++i) {
        RunResult got = module.execute(inputs);
        bool same = got.profile == profile && got.outputs.size() == want.outputs.size();
        for (size_t k = 0; same && k < got.outputs.size(); ++k) {
          same = got.outputs[k].data == want.outputs[k].data;
        }
        if (!same) {
          std::lock_guard<std::mutex> lock(failure_mutex);
          if (failures++ == 0) {
            first_failure = "thread pinned to profile " + std::to_string(profile) +
                            " got profile " + std::to_string(got.profile) + " or other outputs";
          }
        }
      }
    };
    std::thread a(worker, 0, std::cref(in_first), std::cref(want_first));
    std::thread b(worker, last, std::cref(in_last), std::cref(want_last));
    a.join();
    b.join();
    if (failures) {
      std::cerr << "trt-edge-run-threads: " << failures << " disagreement(s); first: "
                << first_failure << "\n";
      return 1;
    }
    std::cout << "ok: 2 threads x 25 executions on profiles 0 and " << last << "\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "trt-edge-run-threads: error: " << e.what() << "\n";
    return 1;
  }
}
