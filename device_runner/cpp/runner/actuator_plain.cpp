// The plain actuator: Module::execute, no backend guard.
#include "actuator.h"

namespace trt_edge::runner {
namespace {

class PlainActuator final : public ProfileActuator {
 public:
  executorch::runtime::Result<std::vector<executorch::runtime::EValue>> execute(
      executorch::extension::Module& module, const std::string& method,
      const std::vector<executorch::runtime::EValue>& values, const Request& /*request*/,
      int64_t /*profile*/) override {
    return module.execute(method, values);
  }
};

}  // namespace

std::unique_ptr<ProfileActuator> make_plain_actuator() { return std::make_unique<PlainActuator>(); }

}  // namespace trt_edge::runner
