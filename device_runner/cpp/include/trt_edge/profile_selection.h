// trt-edge profile selection: which TensorRT optimization profile an execution runs under.
//
// Header-only and dependency-free (no TensorRT, CUDA or ExecuTorch): its own
// small Dims type and a pure select_profile() over a small table, returning an
// outcome value the caller reports. It mirrors the Python module
// trt_edge_runner.policy case for case; both are held to
// tests/vectors/profile_selection.json (docs/design.md, "Profile semantics", after
// Torch-TensorRT's OptimizationProfileSelection.h):
//
//   - empty table                    -> kNoProfileMatchesInputs (any request)
//   - Default (no guard)             -> profile 0, no fit check
//   - Auto                           -> sticky first-fit: keep `active` while every
//                                       input fits, else the lowest index that fits,
//                                       else kNoProfileMatchesInputs
//   - Pinned(i), 0 <= i < N          -> i (no fit check; check_inputs reports misfits)
//   - Pinned(i > 0), N == 1          -> 0 with kPinIgnoredSingleProfile (warn once per
//                                       engine: the caller's job, the policy never logs)
//   - any other pin                  -> kRequestedProfileUnavailable
//   - malformed tables (active out of range, a bounds row shorter than the inputs,
//     a rank differing from min's or max's) answer "does not fit" and never crash.
//
// The guard that records a request is in profile_guard.h, input validation with
// user-facing messages in input_check.h, the per-bundle mode in mode_decision.h;
// profile_policy.h includes all of them.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace trt_edge {

/// TensorRT's own limit (nvinfer1::Dims::MAX_DIMS); no profile describes more.
inline constexpr int32_t kMaxRank = 8;

/// A shape of at most kMaxRank extents, stored inline so the hot path never allocates.
class Dims {
 public:
  constexpr Dims() noexcept = default;

  Dims(std::initializer_list<int64_t> extents) {
    for (int64_t e : extents) {
      push_back(e);
    }
  }

  /// Appends one extent; throws std::length_error past kMaxRank.
  void push_back(int64_t extent) {
    if (rank_ >= kMaxRank) {
      throw std::length_error("trt_edge::Dims: rank exceeds kMaxRank (8)");
    }
    d_[static_cast<size_t>(rank_++)] = extent;
  }

  constexpr int32_t rank() const noexcept { return rank_; }
  constexpr int64_t operator[](int32_t i) const noexcept { return d_[static_cast<size_t>(i)]; }
  int64_t& operator[](int32_t i) noexcept { return d_[static_cast<size_t>(i)]; }

  friend bool operator==(const Dims& a, const Dims& b) noexcept {
    if (a.rank_ != b.rank_) {
      return false;
    }
    for (int32_t i = 0; i < a.rank_; ++i) {
      if (a[i] != b[i]) {
        return false;
      }
    }
    return true;
  }
  friend bool operator!=(const Dims& a, const Dims& b) noexcept { return !(a == b); }

  std::string to_string() const {
    std::string out = "[";
    for (int32_t i = 0; i < rank_; ++i) {
      out += (i ? ", " : "") + std::to_string(d_[static_cast<size_t>(i)]);
    }
    return out + "]";
  }

 private:
  int32_t rank_ = 0;
  std::array<int64_t, kMaxRank> d_{};
};

/// The [min, max] shape envelope one profile allows for one input.
struct ProfileBounds {
  Dims min;
  Dims max;
};

/// Bounds indexed [profile][input], and the profile currently active (loaded).
struct ProfileTable {
  std::vector<std::vector<ProfileBounds>> bounds;
  int64_t active = 0;

  int64_t size() const noexcept { return static_cast<int64_t>(bounds.size()); }
};

enum class RequestKind : uint8_t { kDefault, kPinned, kAuto };

/// What the calling thread asked for. There is no sentinel index for auto: a
/// computed index that came out negative is an error, not a request for auto.
struct Request {
  RequestKind kind = RequestKind::kDefault;
  int64_t index = 0;  ///< Read only when kind == kPinned.

  static constexpr Request default_request() noexcept { return {RequestKind::kDefault, 0}; }
  static constexpr Request pinned(int64_t i) noexcept { return {RequestKind::kPinned, i}; }
  static constexpr Request automatic() noexcept { return {RequestKind::kAuto, 0}; }

  friend constexpr bool operator==(const Request& a, const Request& b) noexcept {
    return a.kind == b.kind && (a.kind != RequestKind::kPinned || a.index == b.index);
  }
  friend constexpr bool operator!=(const Request& a, const Request& b) noexcept {
    return !(a == b);
  }
};

/// Whether execution continues, and what the caller should say.
enum class Outcome : uint8_t {
  kOk,
  kPinIgnoredSingleProfile,      ///< Continues on profile 0; warn once per engine.
  kRequestedProfileUnavailable,  ///< Fatal: a pin the engine lacks (negative, or >= N > 1).
  kNoProfileMatchesInputs,       ///< Fatal: empty table, or auto found no fitting profile.
};

constexpr const char* to_string(Outcome o) noexcept {
  switch (o) {
    case Outcome::kOk:
      return "ok";
    case Outcome::kPinIgnoredSingleProfile:
      return "pin_ignored_single_profile";
    case Outcome::kRequestedProfileUnavailable:
      return "requested_profile_unavailable";
    case Outcome::kNoProfileMatchesInputs:
      return "no_profile_matches_inputs";
  }
  return "unknown";
}

constexpr bool continues(Outcome o) noexcept {
  return o == Outcome::kOk || o == Outcome::kPinIgnoredSingleProfile;
}

/// An outcome and, exactly when it continues, the profile to run.
struct Selection {
  Outcome outcome = Outcome::kNoProfileMatchesInputs;
  std::optional<int64_t> profile;

  friend bool operator==(const Selection& a, const Selection& b) noexcept {
    return a.outcome == b.outcome && a.profile == b.profile;
  }
};

/// Same rank as both min and max, and every extent within [min, max].
inline bool dims_fit(const Dims& dims, const ProfileBounds& b) noexcept {
  const int32_t rank = dims.rank();
  if (rank != b.min.rank() || rank != b.max.rank()) {
    return false;
  }
  for (int32_t i = 0; i < rank; ++i) {
    if (dims[i] < b.min[i] || dims[i] > b.max[i]) {
      return false;
    }
  }
  return true;
}

/// Whether `profile` accepts every input; an index or bounds row the table lacks does not fit.
inline bool profile_fits(const ProfileTable& table, int64_t profile, const Dims* inputs,
                         size_t count) noexcept {
  if (profile < 0 || profile >= table.size()) {
    return false;
  }
  const auto& row = table.bounds[static_cast<size_t>(profile)];
  if (row.size() < count) {
    return false;
  }
  for (size_t i = 0; i < count; ++i) {
    if (!dims_fit(inputs[i], row[i])) {
      return false;
    }
  }
  return true;
}

inline bool profile_fits(const ProfileTable& table, int64_t profile,
                         const std::vector<Dims>& inputs) noexcept {
  return profile_fits(table, profile, inputs.data(), inputs.size());
}

/// Resolves one request against one engine's table for one execution's input shapes.
inline Selection select_profile(const ProfileTable& table, const Request& request,
                                const Dims* inputs, size_t count) noexcept {
  const int64_t n = table.size();
  if (n == 0) {
    return {Outcome::kNoProfileMatchesInputs, std::nullopt};
  }
  switch (request.kind) {
    case RequestKind::kDefault:
      return {Outcome::kOk, 0};
    case RequestKind::kAuto:
      // Sticky: where ranges overlap the answer depends on history, not on the
      // lowest index; pin explicitly when that matters.
      if (profile_fits(table, table.active, inputs, count)) {
        return {Outcome::kOk, table.active};
      }
      for (int64_t p = 0; p < n; ++p) {
        if (p != table.active && profile_fits(table, p, inputs, count)) {
          return {Outcome::kOk, p};
        }
      }
      return {Outcome::kNoProfileMatchesInputs, std::nullopt};
    case RequestKind::kPinned:
      break;
  }
  const int64_t i = request.index;
  if (i >= 0 && i < n) {
    return {Outcome::kOk, i};
  }
  // A single-profile engine can only ever run profile 0, so a pin aimed at a
  // multi-profile sibling must not fail it. Negative indices are never tolerated.
  if (i > 0 && n == 1) {
    return {Outcome::kPinIgnoredSingleProfile, 0};
  }
  return {Outcome::kRequestedProfileUnavailable, std::nullopt};
}

inline Selection select_profile(const ProfileTable& table, const Request& request,
                                const std::vector<Dims>& inputs) noexcept {
  return select_profile(table, request, inputs.data(), inputs.size());
}

}  // namespace trt_edge
