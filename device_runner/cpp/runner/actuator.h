// The actuator: what actually runs an execution, with or without a backend's own
// profile switch.
//
// Emulation (emulation.h) has already selected and validated the profile; the
// actuator only executes. The plain actuator calls Module::execute. The native
// one — compiled in only with -DTRT_EDGE_TORCHTRT_PROFILE_GUARD=ON, against
// Torch-TensorRT's ExecuTorch backend with multi-profile support (an open
// upstream pull request, in no release; it cannot be built on machines without
// TensorRT) — also holds upstream's thread-local OptimizationProfileGuard around
// execute, so every TensorRT delegate switches its engine to the same profile.
// Which one runs is decided per bundle at run time (trt_edge::decide_mode over the
// bundle's delegate_backends), never fixed at compile time.
#pragma once

#include <executorch/extension/module/module.h>

#include <memory>
#include <string>
#include <vector>

#include "trt_edge/profile_selection.h"

namespace trt_edge::runner {

class ProfileActuator {
 public:
  virtual ~ProfileActuator() = default;

  /// Runs `method` once. `request` is what the caller asked for, `profile` what the
  /// emulation selected for it (a native guard pins it, or asks for auto).
  virtual executorch::runtime::Result<std::vector<executorch::runtime::EValue>> execute(
      executorch::extension::Module& module, const std::string& method,
      const std::vector<executorch::runtime::EValue>& values, const Request& request,
      int64_t profile) = 0;
};

/// Module::execute, nothing else: CPU bundles, and TensorRT ones without a native guard.
std::unique_ptr<ProfileActuator> make_plain_actuator();

/// True when this build has the native TensorRT actuator (the decide_mode input).
bool native_actuator_available() noexcept;

/// The native TensorRT actuator, or nullptr when this build has none.
std::unique_ptr<ProfileActuator> make_native_actuator();

}  // namespace trt_edge::runner
