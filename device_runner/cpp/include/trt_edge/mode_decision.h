// trt-edge mode decision: how a bundle runs on this runner — native, emulated, or
// profile 0 only — taken once per bundle, at open.
//
// Pure and dependency-free, like select_profile. Mirrors
// trt_edge_runner.policy.decide_mode case for case; both are held to
// tests/vectors/mode_decision.json. Inputs: the bundle's delegate backend ids
// (bundle.json `delegates[].backend_id`), its profile count, whether this runner
// has a native TensorRT profile guard (the C++ runner: compiled in with
// -DTRT_EDGE_TORCHTRT_PROFILE_GUARD=ON), and whether the policy is honoured.
//
//   - TensorRT delegates and a native guard      -> native
//   - TensorRT delegates, no guard, N > 1        -> emulated, profile 0 only, notice
//                                                   kTensorRTWithoutNativeGuard
//   - honour_policy == false                     -> profile 0 only (notice
//                                                   kPolicyIgnored when N > 1)
//   - everything else (CPU delegates)            -> emulated: the runner is the policy
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace trt_edge {

/// Backend id under which Torch-TensorRT's ExecuTorch delegate registers (and lowers).
inline constexpr const char* kTensorRTBackendId = "TensorRTBackend";

enum class Mode : uint8_t { kNative, kEmulated };

/// The one notice a degraded mode gives (none, or why it runs profile 0 only).
enum class Notice : uint8_t { kNone, kTensorRTWithoutNativeGuard, kPolicyIgnored };

constexpr const char* to_string(Mode m) noexcept {
  return m == Mode::kNative ? "native" : "emulated";
}

/// The vectors' spelling: "" for kNone.
constexpr const char* to_string(Notice n) noexcept {
  switch (n) {
    case Notice::kNone:
      return "";
    case Notice::kTensorRTWithoutNativeGuard:
      return "tensorrt_without_native_guard";
    case Notice::kPolicyIgnored:
      return "policy_ignored";
  }
  return "unknown";
}

struct ModeDecision {
  Mode mode = Mode::kEmulated;
  bool profile0_only = false;
  Notice notice = Notice::kNone;

  friend bool operator==(const ModeDecision& a, const ModeDecision& b) noexcept {
    return a.mode == b.mode && a.profile0_only == b.profile0_only && a.notice == b.notice;
  }
};

inline ModeDecision decide_mode(const std::vector<std::string>& delegate_backends,
                                int64_t profile_count, bool native_guard,
                                bool honour_policy) noexcept {
  bool has_trt = false;
  for (const auto& id : delegate_backends) {
    has_trt = has_trt || id == kTensorRTBackendId;
  }
  const bool multi = profile_count > 1;
  const Mode mode = has_trt && native_guard ? Mode::kNative : Mode::kEmulated;
  if (has_trt && !native_guard && multi) {
    return {mode, true, Notice::kTensorRTWithoutNativeGuard};
  }
  if (!honour_policy) {
    return {mode, true, multi ? Notice::kPolicyIgnored : Notice::kNone};
  }
  return {mode, false, Notice::kNone};
}

/// The sentence a runner prints once, at open, for a notice ("" for kNone).
inline std::string notice_message(Notice n, int64_t profile_count) {
  switch (n) {
    case Notice::kNone:
      return "";
    case Notice::kTensorRTWithoutNativeGuard:
      return std::to_string(profile_count) +
             " optimization profiles, but this runner has no native TensorRT profile guard "
             "(built without -DTRT_EDGE_TORCHTRT_PROFILE_GUARD=ON): running profile 0 only "
             "(every phase and pin uses profile 0)";
    case Notice::kPolicyIgnored:
      return "policy ignored on request: running profile 0 only";
  }
  return "";
}

}  // namespace trt_edge
