// Generation, step 3 of 4: the new tokens (ExecuTorch's TextTokenGenerator). Each token is
// sampled from the previous call's logits (sampler.h), handed to the caller as soon as it
// exists (streaming), and — unless generation stops there — fed back as one call under the
// `decode` phase's guard.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <vector>

#include "generation_state.h"
#include "sampler.h"

namespace trt_edge::runner {

/// When to stop, besides a cancel.
struct StopRule {
  int64_t max_new_tokens = 16;
  std::set<int64_t> eos_token_ids;   ///< the bundle's, unless the request ignores them
  std::set<int64_t> stop_token_ids;  ///< the request's
};

/// What the caller hears: each token as it is made, and whether to stop before the next.
/// `allowed` (constrained generation) is asked before token `index` is sampled for the ids it
/// may be (a bitset, sampler.h's apply_token_mask); nullopt stops the generation as cancelled.
struct TokenCallbacks {
  std::function<void(int64_t index, int64_t token)> on_token;
  std::function<bool()> cancelled;
  std::function<std::optional<std::vector<uint32_t>>(int64_t index)> allowed;
};

/// The next token from one row of logits: masked first when `allowed` is given (a draw that
/// lands on a masked id through rounding becomes the most likely allowed id).
int64_t sample_token(Sampler& sampler, std::vector<float> row, const std::vector<int64_t>& seen,
                     const std::vector<uint32_t>* allowed);

/// Which rule ends a generation after its `made`-th token `token`, the next cache position to
/// write being `position` (cache_len: the cache's length); nullptr when it goes on (a cancel
/// is the caller's to check).
const char* stop_reason(const StopRule& rule, int64_t token, size_t made, int64_t position,
                        int64_t cache_len);

/// Samples the first token from `logits` (the prompt's), then decodes until a stop: the
/// stop token is kept in stats.tokens; stats.stop says which rule ended it ("eos",
/// "stop_token", "max_new_tokens", "cache_full", "cancelled"). `position` is the next
/// cache slot to write; `seen` the prompt (the repetition penalty's history).
void generate_tokens(GenerationState& state, Sampler& sampler, Array logits, int64_t position,
                     std::vector<int64_t> seen, const StopRule& rule,
                     const TokenCallbacks& callbacks, GenerationResult& stats,
                     const std::function<double()>& seconds_since_start);

}  // namespace trt_edge::runner
