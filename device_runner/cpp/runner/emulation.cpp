#include "emulation.h"

#include <iostream>
#include <utility>

#include "errors.h"

namespace trt_edge::runner {

ProfileEmulation::ProfileEmulation(ProfileTable table, std::vector<std::string> input_names)
    : table_(std::move(table)), input_names_(std::move(input_names)) {}

Selection ProfileEmulation::resolve(const Request& request, const std::vector<Dims>& dims) {
  const Selection selection = select_profile(table_, request, dims);
  switch (selection.outcome) {
    case Outcome::kNoProfileMatchesInputs:
      throw RunnerError(ErrorKind::kRequestRefused, describe_no_match(table_, dims, input_names_));
    case Outcome::kRequestedProfileUnavailable:
      throw RunnerError(ErrorKind::kRequestRefused,
                        "the request pins profile " + std::to_string(request.index) +
                            ", but the bundle has " + std::to_string(table_.size()) +
                            " profile(s) (valid: 0.." + std::to_string(table_.size() - 1) + ")");
    case Outcome::kPinIgnoredSingleProfile:
      if (!pin_warned_) {
        pin_warned_ = true;
        std::cerr << "trt-edge-run: warning: single-profile bundle: ignoring the pin to profile "
                  << request.index << " and running profile 0 (logged once)\n";
      }
      break;
    case Outcome::kOk:
      break;
  }
  const int64_t profile = *selection.profile;
  if (const InputViolation v = check_inputs(table_, profile, dims)) {
    RunnerError error(ErrorKind::kRequestRefused, describe(v, profile, input_names_));
    const bool about_one_input = v.kind == InputViolation::Kind::kRank ||
                                 v.kind == InputViolation::Kind::kExtent;
    if (about_one_input && v.input < input_names_.size()) error.with_input(input_names_[v.input]);
    throw error;
  }
  table_.active = profile;
  return selection;
}

}  // namespace trt_edge::runner
