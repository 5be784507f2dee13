#include <algorithm>
#include <iomanip>
#include <iostream>

#include "documents.h"
#include "jobs.h"
#include <filesystem>

#include "input_values.h"
#include "random_inputs.h"
#include "stage.h"

namespace trt_edge::runner::cli {
namespace {

double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const size_t k = std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5));
  return v[k];
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

}  // namespace

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

}  // namespace trt_edge::runner::cli
