// ProfiledModule: executorch::extension::Module::execute wrapped with the bundle's
// profile policy. Per call, in the order docs/design.md fixes: collect every input's
// dims → select_profile for the request in scope on this thread (set by a
// trt_edge::OptimizationProfileGuard) → check every input against the selected
// profile (emulation.h) → execute through the actuator (actuator.h).
//
// The mode is decided at open from the bundle's delegate_backends
// (trt_edge::decide_mode, held to tests/vectors/mode_decision.json like the Python
// runner): a TensorRT bundle runs native where this build has the native actuator,
// a multi-profile TensorRT bundle without it runs profile 0 only and says so once,
// CPU bundles are emulated (emulation is their whole profile support).
#pragma once

#include <executorch/extension/module/module.h>
#include <executorch/extension/tensor/tensor.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "actuator.h"
#include "bundle.h"
#include "emulation.h"
#include "npy.h"
#include "trt_edge/mode_decision.h"
#include "trt_edge/profile_guard.h"

namespace trt_edge::runner {

struct RunResult {
  std::vector<Array> outputs;
  int64_t profile = 0;
  Outcome outcome = Outcome::kOk;
};

class ProfiledModule {
 public:
  /// Loads `bundle.dir/model.pte` (and model.ptd when listed) with full verification and
  /// checks its method's inputs against bundle.json (RunnerError kProgramLoad otherwise);
  /// `honour_policy=false` runs every request as Default (profile 0), as a runner without
  /// profile support would.
  ProfiledModule(Bundle bundle, bool honour_policy);

  const Bundle& bundle() const noexcept { return bundle_; }
  const ModeDecision& decision() const noexcept { return decision_; }
  const char* mode() const noexcept { return to_string(decision_.mode); }

  /// The request a phase names; RunnerError (kRequestRefused) naming the phases for an unknown one.
  Request request_for_phase(const std::string& phase) const;

  /// Select, validate, execute under current_request(); RunnerError before anything runs
  /// for a pin the bundle cannot honour, a shape no profile accepts, or (a causal LM,
  /// bundle.json `llm`) a cache position outside [0, max_cache_len) (cache_bounds.h).
  RunResult execute(const std::vector<Array>& inputs);

  /// Wall time of the last execute's own work before Module::execute: dims, select,
  /// validate, tensor wrapping (the runner's per-call overhead; the bench reports it).
  double last_overhead_us() const noexcept { return last_overhead_us_; }
  /// Wall time of the last execute's copy of its outputs out of the method's planned
  /// memory (which the next execution overwrites) — reported apart from the overhead.
  double last_copy_us() const noexcept { return last_copy_us_; }

  /// Module::execute alone on prepared inputs, no policy: the baseline the bench compares to.
  void execute_raw(const std::vector<Array>& inputs);

 private:
  void load_program(const std::string& pte);
  void check_method_inputs(const std::string& pte);
  std::vector<executorch::runtime::EValue> wrap(const std::vector<Array>& inputs,
                                                std::vector<executorch::extension::TensorPtr>& keep);

  Bundle bundle_;
  ModeDecision decision_;
  ProfileEmulation emulation_;
  std::unique_ptr<ProfileActuator> actuator_;
  std::unique_ptr<executorch::extension::Module> module_;
  double last_overhead_us_ = 0.0;
  double last_copy_us_ = 0.0;
  std::mutex mutex_;  // Module is not reentrant and auto is sticky: one execution at a time.
};

/// Runs `body` under the guard an application writes for `request` (a pin or auto): the
/// guard records the request for this thread; ProfiledModule::execute resolves it.
template <typename Body>
auto guarded(const Request& request, Body&& body) {
  if (request.kind == RequestKind::kAuto) {
    auto guard = OptimizationProfileGuard::automatic();
    return body();
  }
  OptimizationProfileGuard guard(request.index);
  return body();
}

}  // namespace trt_edge::runner
