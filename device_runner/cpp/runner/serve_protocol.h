// The requests of `trt-edge-run --serve` (docs/engine-protocol.md), read from one JSON line
// each: parsed and range-checked here, before they are queued, so a malformed request is
// answered at once with an error event naming the field, and never reaches the engine.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "errors.h"
#include "generate.h"
#include "npy.h"

namespace trt_edge::runner::serve {

enum class Op { kGenerate, kInfer, kCancel, kPing, kShutdown, kMask };

/// A `mask` request: the ids token `index` of the constrained generation `target` may be.
struct MaskRequest {
  std::string target;
  int64_t index = 0;
  std::vector<uint32_t> allowed;  ///< bit k%32 of word k/32 = id k
};

/// One tensor of an `infer` request: raw little-endian row-major bytes.
struct NamedArray {
  std::string name;
  Array array;
};

/// What an `infer` runs under: a phase, a pinned profile, auto, or (none given) the
/// bundle's only phase.
struct InferRequest {
  std::optional<std::string> phase;
  std::optional<int64_t> profile;
  bool automatic = false;
  std::vector<NamedArray> inputs;
  std::optional<std::vector<std::string>> outputs;  ///< the outputs wanted; all when absent
};

struct ServeRequest {
  std::string id;
  Op op = Op::kPing;
  GenerationRequest generate;  ///< kGenerate
  bool stream = false;         ///< kGenerate: a token event per token
  bool constrained = false;    ///< kGenerate: wait for a `mask` before each token
  MaskRequest mask;            ///< kMask
  InferRequest infer;          ///< kInfer
  std::string target;          ///< kCancel
};

/// A request that cannot be read: `kind` is "protocol" (not an object, no id/op) or "usage"
/// (a field out of range or of the wrong type); `field` names it ("" when none); `id` is
/// the request's id when it had a readable one.
class RequestError : public std::runtime_error {
 public:
  RequestError(std::string kind, const std::string& message, std::string field = "")
      : std::runtime_error(message), kind_(std::move(kind)), field_(std::move(field)) {}
  const std::string& kind() const noexcept { return kind_; }
  const std::string& field() const noexcept { return field_; }
  std::optional<std::string> id;

 private:
  std::string kind_;
  std::string field_;
};

/// The request on `line`; RequestError for anything malformed (unknown fields included:
/// a misspelt option is refused, not ignored).
ServeRequest parse_request(const std::string& line);

}  // namespace trt_edge::runner::serve
