// The C++ runner's one error type: a failure kind (which decides the exit code), a
// message naming what is wrong, where and what to do, and the place it concerns.
//
// The kinds and their exit codes are trt-edge-run's machine interface: a parent
// process (the device agent) tells a refused bundle from a refused request from a
// failed execution by the exit code alone, and reads the details from the JSON
// error document (`--json`). The table is mirrored, code for code, by
// trt_edge_runner/runner_interface.py (a test holds the two and `--help` together).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace trt_edge::runner {

/// Why trt-edge-run stopped; the value is its exit code.
enum class ErrorKind : int {
  kInternal = 1,         ///< Anything unclassified (out of memory, a bug).
  kUsage = 2,            ///< The command line: unknown flag, missing or malformed value.
  kBundleFormat = 3,     ///< Not a bundle, or bundle.json unreadable / not schema 1.
  kBundleIntegrity = 4,  ///< The integrity rule refused the bundle's files.
  kTargetMismatch = 5,   ///< bundle.json's target.arch is not this binary's architecture.
  kProgramLoad = 6,      ///< model.pte or its method does not load, or disagrees with bundle.json.
  kRequestRefused = 7,   ///< A phase, pin, shape or input the bundle cannot serve.
  kExecutionFailed = 8,  ///< The method was executed and ExecuTorch returned an error.
  kOutputWrite = 9,      ///< --outputs could not be written.
};

inline constexpr int exit_code(ErrorKind kind) noexcept { return static_cast<int>(kind); }

/// One row of the exit-code table: the kind, its JSON spelling (`error.kind`, the same
/// words as runner_interface.py) and what it means (`trt-edge-run --help` prints these).
struct ErrorKindInfo {
  ErrorKind kind;
  const char* name;
  const char* meaning;
};

inline constexpr ErrorKindInfo kErrorKinds[] = {
    {ErrorKind::kInternal, "internal", "unclassified failure (out of memory, a bug)"},
    {ErrorKind::kUsage, "usage", "the command line: unknown flag, missing or bad value"},
    {ErrorKind::kBundleFormat, "bundle_format", "not a bundle, bundle.json unreadable or not schema 1"},
    {ErrorKind::kBundleIntegrity, "bundle_integrity", "the integrity rule refused the bundle's files"},
    {ErrorKind::kTargetMismatch, "target_mismatch",
     "bundle.json target.arch is not this runner's architecture"},
    {ErrorKind::kProgramLoad, "program_load",
     "model.pte or its method does not load, or disagrees with bundle.json"},
    {ErrorKind::kRequestRefused, "request_refused",
     "a phase, pin, shape or input the bundle cannot serve"},
    {ErrorKind::kExecutionFailed, "execution_failed",
     "the method ran and ExecuTorch returned an error"},
    {ErrorKind::kOutputWrite, "output_write", "--outputs could not be written"},
};

inline constexpr const char* to_string(ErrorKind kind) noexcept {
  for (const auto& row : kErrorKinds) {
    if (row.kind == kind) return row.name;
  }
  return "internal";
}

/// A user-facing failure of `kind`; `file`/`input`/`phase` say where, when known.
class RunnerError : public std::runtime_error {
 public:
  RunnerError(ErrorKind kind, const std::string& message)
      : std::runtime_error(message), kind_(kind) {}

  ErrorKind kind() const noexcept { return kind_; }
  int exit_code() const noexcept { return runner::exit_code(kind_); }

  const std::string& file() const noexcept { return file_; }
  const std::string& input() const noexcept { return input_; }
  const std::string& phase() const noexcept { return phase_; }

  RunnerError& with_file(std::string file) {
    file_ = std::move(file);
    return *this;
  }
  RunnerError& with_input(std::string input) {
    input_ = std::move(input);
    return *this;
  }
  RunnerError& with_phase(std::string phase) {
    phase_ = std::move(phase);
    return *this;
  }

 private:
  ErrorKind kind_;
  std::string file_;
  std::string input_;
  std::string phase_;
};

}  // namespace trt_edge::runner
