// Built without -DTRT_EDGE_TORCHTRT_PROFILE_GUARD=ON: no native TensorRT actuator, so
// decide_mode runs a multi-profile TensorRT bundle as profile 0 only (and says so).
#include "actuator.h"

namespace trt_edge::runner {

bool native_actuator_available() noexcept { return false; }

std::unique_ptr<ProfileActuator> make_native_actuator() { return nullptr; }

}  // namespace trt_edge::runner
