// Reading a trt-edge bundle directory: bundle.json (the contract written by
// trt_edge_runner/bundle_format.py) and the integrity of the files it lists.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "trt_edge/profile_policy.h"

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

/// One input or output: `shape` mixes static extents and symbol names.
struct TensorSpec {
  std::string name;
  std::string dtype;
  std::vector<std::variant<int64_t, std::string>> shape;
  std::optional<std::pair<int64_t, int64_t>> values;  ///< [low, high) for integer inputs.
};

struct DimRange {
  int64_t min = 0;
  int64_t opt = 0;
  int64_t max = 0;
};

struct Profile {
  std::string name;
  std::map<std::string, DimRange> dims;
};

/// A phase's target: a profile index, or nullopt for "auto".
using PhaseTarget = std::optional<int64_t>;

struct Bundle {
  std::string dir;
  std::string name;
  std::string version;
  std::string method;
  std::vector<TensorSpec> inputs;
  std::vector<TensorSpec> outputs;
  std::vector<Profile> profiles;
  std::map<std::string, PhaseTarget> phases;
  std::map<std::string, std::pair<std::string, int64_t>> files;  ///< name → (sha256, size)
  std::vector<std::string> delegate_backends;

  /// Bounds indexed [profile][input], as `ProfileTable.from_bundle` builds them in Python.
  ProfileTable profile_table() const;
  /// Concrete shape of input `i` with its symbols taken from `symbols`.
  std::vector<int64_t> shape_of(const TensorSpec& spec,
                                const std::map<std::string, int64_t>& symbols) const;
};

/// Parses `dir/bundle.json`; throws RunnerError naming the file and the JSON path at fault.
Bundle read_bundle(const std::string& dir);

/// Checks every listed file's size, and its sha256 when built with OpenSSL
/// (TRT_EDGE_HAVE_OPENSSL); throws RunnerError naming the file.
void verify_files(const Bundle& bundle);

/// True when verify_files checks digests (not only sizes).
bool verifies_digests() noexcept;

}  // namespace trt_edge::runner
