// The C++ runner's one error type: a message naming what is wrong, where and what to
// do, and the exit code trt-edge-run returns for it.
#pragma once

#include <stdexcept>
#include <string>

namespace trt_edge::runner {

/// A user-facing failure; `exit_code` is 1 (bundle/runtime failed) or 2 (bad request/input).
class RunnerError : public std::runtime_error {
 public:
  RunnerError(const std::string& message, int exit_code)
      : std::runtime_error(message), exit_code_(exit_code) {}
  int exit_code() const noexcept { return exit_code_; }

 private:
  int exit_code_;
};

}  // namespace trt_edge::runner
