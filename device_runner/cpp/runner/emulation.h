// Emulation: the runner itself applies the profile policy to one engine's executions.
//
// docs/design.md keeps three things apart: the pure policy (include/trt_edge/), the
// actuator (a backend's native guard: actuator.h) and emulation — here. Per
// execution: select a profile for the request (select_profile), turn a failing
// outcome into a RunnerError (kRequestRefused) naming the pin or every profile's ranges,
// warn once per engine for an ignored pin, validate every input against the
// selected profile (check_inputs), record it as active so auto stays sticky.
// It runs on every backend, under a native guard too (same clear errors first).
// Mirrors trt_edge_runner.emulation.ProfileResolver. Not thread-safe, like a
// Module: the caller serialises executions.
#pragma once

#include <string>
#include <vector>

#include "trt_edge/input_check.h"
#include "trt_edge/profile_selection.h"

namespace trt_edge::runner {

class ProfileEmulation {
 public:
  ProfileEmulation(ProfileTable table, std::vector<std::string> input_names);

  /// The profile this execution runs under, or RunnerError (kRequestRefused) before anything runs.
  Selection resolve(const Request& request, const std::vector<Dims>& dims);

  const ProfileTable& table() const noexcept { return table_; }

 private:
  ProfileTable table_;
  std::vector<std::string> input_names_;
  bool pin_warned_ = false;
};

}  // namespace trt_edge::runner
