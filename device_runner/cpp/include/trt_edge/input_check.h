// trt-edge input check: does the selected profile accept every input, and if not, a
// sentence naming the input, dim, value and allowed range (what a user reads).
// Mirrors trt_edge_runner.input_check; header-only, dependency-free.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "trt_edge/profile_selection.h"

namespace trt_edge {

/// Why a profile does not accept an execution's inputs (kind == kNone: it does).
struct InputViolation {
  enum class Kind : uint8_t { kNone, kNoSuchProfile, kMissingBounds, kRank, kExtent };
  Kind kind = Kind::kNone;
  size_t input = 0;    ///< The offending input (kRank, kExtent).
  int32_t dim = 0;     ///< The offending dim (kExtent).
  int64_t value = 0;   ///< The extent (kExtent) or the input's rank (kRank).
  int64_t min = 0;     ///< Allowed range (kExtent) or expected rank (kRank, in both).
  int64_t max = 0;

  explicit operator bool() const noexcept { return kind != Kind::kNone; }
};

/// Validates every input against `profile`; the first violation is returned.
inline InputViolation check_inputs(const ProfileTable& table, int64_t profile, const Dims* inputs,
                                   size_t count) noexcept {
  using K = InputViolation::Kind;
  if (profile < 0 || profile >= table.size()) {
    return {K::kNoSuchProfile, 0, 0, profile, 0, table.size()};
  }
  const auto& row = table.bounds[static_cast<size_t>(profile)];
  if (row.size() < count) {
    return {K::kMissingBounds, row.size(), 0, static_cast<int64_t>(count), 0, 0};
  }
  for (size_t i = 0; i < count; ++i) {
    const Dims& d = inputs[i];
    const ProfileBounds& b = row[i];
    if (d.rank() != b.min.rank() || d.rank() != b.max.rank()) {
      return {K::kRank, i, 0, d.rank(), b.min.rank(), b.max.rank()};
    }
    for (int32_t k = 0; k < d.rank(); ++k) {
      if (d[k] < b.min[k] || d[k] > b.max[k]) {
        return {K::kExtent, i, k, d[k], b.min[k], b.max[k]};
      }
    }
  }
  return {};
}

inline InputViolation check_inputs(const ProfileTable& table, int64_t profile,
                                   const std::vector<Dims>& inputs) noexcept {
  return check_inputs(table, profile, inputs.data(), inputs.size());
}

/// A user-facing sentence for a violation: input name, dim, value, allowed range.
inline std::string describe(const InputViolation& v, int64_t profile,
                            const std::vector<std::string>& input_names = {}) {
  using K = InputViolation::Kind;
  const std::string p = "profile " + std::to_string(profile);
  const std::string name =
      v.input < input_names.size() ? input_names[v.input] : "#" + std::to_string(v.input);
  switch (v.kind) {
    case K::kNone:
      return "inputs fit " + p;
    case K::kNoSuchProfile:
      return p + " does not exist: the engine has " + std::to_string(v.max) + " profile(s)";
    case K::kMissingBounds:
      return p + " describes " + std::to_string(v.input) + " input(s) but the execution passes " +
             std::to_string(v.value) + "; the profile table is malformed: rebuild the bundle";
    case K::kRank:
      return "input '" + name + "' has rank " + std::to_string(v.value) + " but " + p +
             " expects rank " + std::to_string(v.min) +
             (v.min != v.max ? " (malformed bounds: max has rank " + std::to_string(v.max) + ")"
                             : std::string()) +
             "; pass a tensor of that rank";
    case K::kExtent:
      return "input '" + name + "' dim " + std::to_string(v.dim) + " = " +
             std::to_string(v.value) + " is outside " + p + "'s allowed range [" +
             std::to_string(v.min) + ", " + std::to_string(v.max) +
             "]; pass a shape inside the range, or pin/select a profile that accepts it";
  }
  return "unknown violation";
}

/// The message for kNoProfileMatchesInputs: the shapes, then every profile's ranges
/// (`[1, 32..2048]`: a fixed extent as one number, a range as lo..hi).
inline std::string describe_no_match(const ProfileTable& table, const std::vector<Dims>& inputs,
                                     const std::vector<std::string>& input_names = {}) {
  auto name = [&input_names](size_t i) {
    return i < input_names.size() ? input_names[i] : "#" + std::to_string(i);
  };
  auto envelope = [](const ProfileBounds& b) {
    if (b.min.rank() != b.max.rank()) {
      return "min " + b.min.to_string() + " / max " + b.max.to_string() + " (malformed)";
    }
    std::string out = "[";
    for (int32_t k = 0; k < b.min.rank(); ++k) {
      out += (k ? ", " : "") + std::to_string(b.min[k]);
      if (b.min[k] != b.max[k]) {
        out += ".." + std::to_string(b.max[k]);
      }
    }
    return out + "]";
  };
  std::string out = "no profile matches inputs ";
  for (size_t i = 0; i < inputs.size(); ++i) {
    out += (i ? ", " : "") + name(i) + "=" + inputs[i].to_string();
  }
  if (table.bounds.empty()) {
    return out + ": the engine's profile table is empty; rebuild the bundle with a profile";
  }
  out += "; the profiles accept:";
  for (size_t p = 0; p < table.bounds.size(); ++p) {
    out += "\n  profile " + std::to_string(p) + ":";
    const auto& row = table.bounds[p];
    for (size_t i = 0; i < row.size(); ++i) {
      out += (i ? "; " : " ") + name(i) + " " + envelope(row[i]);
    }
  }
  return out + "\nuse shapes inside one profile, or add a profile covering them to the manifest";
}

}  // namespace trt_edge
