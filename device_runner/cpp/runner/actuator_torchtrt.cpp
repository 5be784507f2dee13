// The native TensorRT actuator: upstream Torch-TensorRT's OptimizationProfileGuard
// around Module::execute. Compiled only with -DTRT_EDGE_TORCHTRT_PROFILE_GUARD=ON,
// against the ExecuTorch TensorRT backend of pytorch/TensorRT's multi-profile pull
// request (its installed torch_tensorrt/executorch/TensorRTBackend.h); it cannot be
// built on machines without TensorRT, so it is kept to these few lines.
//
// The guard records the request on this thread (int32 index, or ::automatic()); each
// TensorRT delegate resolves it in its own execute() with upstream's select_profile,
// which follows the same rules and vectors as ours. A pin hands over the profile the
// emulation selected (for a single-profile engine that is 0: the pin-ignored case),
// auto stays auto (the engine keeps its own sticky state), Default sets no guard.
#include <torch_tensorrt/executorch/TensorRTBackend.h>

#include "actuator.h"

namespace trt_edge::runner {
namespace {

namespace tt = torch_tensorrt::executorch;

class TorchTensorRTActuator final : public ProfileActuator {
 public:
  executorch::runtime::Result<std::vector<executorch::runtime::EValue>> execute(
      executorch::extension::Module& module, const std::string& method,
      const std::vector<executorch::runtime::EValue>& values, const Request& request,
      int64_t profile) override {
    if (request.kind == RequestKind::kAuto) {
      auto guard = tt::OptimizationProfileGuard::automatic();
      return module.execute(method, values);
    }
    if (request.kind == RequestKind::kPinned) {
      tt::OptimizationProfileGuard guard(static_cast<int32_t>(profile));
      return module.execute(method, values);
    }
    return module.execute(method, values);
  }
};

}  // namespace

bool native_actuator_available() noexcept { return true; }

std::unique_ptr<ProfileActuator> make_native_actuator() {
  return std::make_unique<TorchTensorRTActuator>();
}

}  // namespace trt_edge::runner
