#include "token_generator.h"

namespace trt_edge::runner {

void generate_tokens(GenerationState& state, Sampler& sampler, Array logits, int64_t position,
                     std::vector<int64_t> seen, const StopRule& rule,
                     const TokenCallbacks& callbacks, GenerationResult& stats,
                     const std::function<double()>& seconds_since_start) {
  const int64_t cache_len = state.plan().max_cache_len;
  for (;;) {
    int64_t token = 0;
    if (callbacks.allowed) {
      const auto allowed = callbacks.allowed(static_cast<int64_t>(stats.tokens.size()));
      if (!allowed) {
        stats.stop = "cancelled";
        break;
      }
      std::vector<float> row = last_row(logits);
      apply_token_mask(row, *allowed);
      token = sampler.next(row, seen);
      // A draw lands on a masked id only through rounding at the end of the walk: the most
      // likely allowed id then, never a token the grammar refused.
      if (!token_allowed(*allowed, token)) token = argmax(row);
    } else {
      token = sampler.next(last_row(logits), seen);
    }
    if (stats.tokens.empty()) stats.first_token_s = seconds_since_start();
    stats.tokens.push_back(token);
    seen.push_back(token);
    if (callbacks.on_token) {
      callbacks.on_token(static_cast<int64_t>(stats.tokens.size()) - 1, token);
    }
    if (rule.eos_token_ids.count(token)) {
      stats.stop = "eos";
    } else if (rule.stop_token_ids.count(token)) {
      stats.stop = "stop_token";
    } else if (static_cast<int64_t>(stats.tokens.size()) >= rule.max_new_tokens) {
      stats.stop = "max_new_tokens";
    } else if (position >= cache_len) {
      stats.stop = "cache_full";  // the token cannot be fed back: no slot left
    } else if (callbacks.cancelled && callbacks.cancelled()) {
      stats.stop = "cancelled";
    } else {
      logits = state.call(kDecodePhase, {token}, position, stats);
      position += 1;
      continue;
    }
    break;
  }
  stats.total_s = seconds_since_start();
}

}  // namespace trt_edge::runner
