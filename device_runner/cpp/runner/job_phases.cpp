#include <algorithm>
#include <iomanip>
#include <iostream>

#include "documents.h"
#include "jobs.h"

#include "input_values.h"
#include "random_inputs.h"
#include "stage.h"

namespace trt_edge::runner::cli {
namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

}  // namespace

/// phases: every phase (or those named) at its profile's opt shape, warm-up then timed runs.
int run_phases(const Options& o, ProfiledModule& module) {
  const Bundle& b = module.bundle();
  std::vector<std::string> names = o.phases;
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

}  // namespace trt_edge::runner::cli
