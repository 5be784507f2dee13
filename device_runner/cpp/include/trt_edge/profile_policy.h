// trt-edge profile policy: which TensorRT optimization profile an execution runs under.
//
// Header-only and dependency-free (no TensorRT, CUDA or ExecuTorch): its own
// small Dims type, a pure select_profile() over a small table, input
// validation that says which input/dim/value/range failed, and a thread-local
// OptimizationProfileGuard that only records a request. It mirrors the Python
// module trt_edge_runner.policy / .guard / .input_check case for case; both
// are held to tests/vectors/profile_selection.json (DESIGN.md, "Profile
// semantics", after Torch-TensorRT's OptimizationProfileSelection.h):
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
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
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

namespace detail {
inline Request& thread_request() noexcept {
  thread_local Request request = Request::default_request();
  return request;
}

template <typename T>
inline constexpr bool is_index_type_v =
    std::is_integral_v<T> && !std::is_same_v<std::remove_cv_t<T>, bool>;
}  // namespace detail

/// The innermost request in scope on the calling thread (Default when none).
inline Request current_request() noexcept { return detail::thread_request(); }

/// Records a profile request for the calling thread and restores the enclosing one
/// when it goes out of scope. It never sees an engine: each delegate resolves
/// current_request() in its own execute(). Construct it on the executing thread.
///
///   trt_edge::OptimizationProfileGuard pin(1);                  // pin profile 1
///   auto pick = trt_edge::OptimizationProfileGuard::automatic(); // from shapes
///
/// Any integer type is accepted (int64_t, size_t, ... — not only int32_t, so no
/// overload is ambiguous); bool is deleted so `Guard(true)` cannot mean profile 1;
/// a negative index throws std::invalid_argument at construction, an index the
/// engine lacks is reported by select_profile when it executes.
class [[nodiscard]] OptimizationProfileGuard {
 public:
  template <typename Int, std::enable_if_t<detail::is_index_type_v<Int>, int> = 0>
  explicit OptimizationProfileGuard(Int index)
      : OptimizationProfileGuard(Request::pinned(checked_index(index))) {}

  OptimizationProfileGuard(bool) = delete;

  /// Shape-based (sticky first-fit) selection. [[nodiscard]]: a discarded guard
  /// is destroyed on the same line and would silently request nothing.
  [[nodiscard]] static OptimizationProfileGuard automatic() noexcept {
    return OptimizationProfileGuard(Request::automatic());
  }

  ~OptimizationProfileGuard() { detail::thread_request() = previous_; }

  OptimizationProfileGuard(const OptimizationProfileGuard&) = delete;
  OptimizationProfileGuard& operator=(const OptimizationProfileGuard&) = delete;
  OptimizationProfileGuard(OptimizationProfileGuard&&) = delete;
  OptimizationProfileGuard& operator=(OptimizationProfileGuard&&) = delete;

  /// The request this guard installed.
  Request request() const noexcept { return request_; }

 private:
  explicit OptimizationProfileGuard(Request request) noexcept
      : previous_(detail::thread_request()), request_(request) {
    detail::thread_request() = request;
  }

  template <typename Int>
  static int64_t checked_index(Int index) {
    if constexpr (std::is_signed_v<Int>) {
      if (index < 0) {
        throw std::invalid_argument(
            "OptimizationProfileGuard: profile index must be >= 0, got " + std::to_string(index) +
            "; use OptimizationProfileGuard::automatic() for shape-based selection");
      }
    } else if constexpr (sizeof(Int) >= sizeof(int64_t)) {
      if (index > static_cast<Int>(std::numeric_limits<int64_t>::max())) {
        throw std::out_of_range("OptimizationProfileGuard: profile index out of range");
      }
    }
    return static_cast<int64_t>(index);
  }

  Request previous_;
  Request request_;
};

}  // namespace trt_edge
