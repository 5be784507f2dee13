#include "token_generator.h"

namespace trt_edge::runner {

int64_t sample_token(Sampler& sampler, std::vector<float> row, const std::vector<int64_t>& seen,
                     const std::vector<uint32_t>* allowed) {
  if (!allowed) return sampler.next(row, seen);
  apply_token_mask(row, *allowed);
  const int64_t token = sampler.next(row, seen);
  // A draw lands on a masked id only through rounding at the end of the walk: the most
  // likely allowed id then, never a token the grammar refused.
  return token_allowed(*allowed, token) ? token : argmax(row);
}

const char* stop_reason(const StopRule& rule, int64_t token, size_t made, int64_t position,
                        int64_t cache_len) {
  if (rule.eos_token_ids.count(token)) return "eos";
  if (rule.stop_token_ids.count(token)) return "stop_token";
  if (static_cast<int64_t>(made) >= rule.max_new_tokens) return "max_new_tokens";
  if (position >= cache_len) return "cache_full";  // the token cannot be fed back: no slot left
  return nullptr;
}

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
      token = sample_token(sampler, last_row(logits), seen, &*allowed);
    } else {
      token = sample_token(sampler, last_row(logits), seen, nullptr);
    }
    if (stats.tokens.empty()) stats.first_token_s = seconds_since_start();
    stats.tokens.push_back(token);
    seen.push_back(token);
    if (callbacks.on_token) {
      callbacks.on_token(static_cast<int64_t>(stats.tokens.size()) - 1, token);
    }
    if (const char* stop = stop_reason(rule, token, stats.tokens.size(), position, cache_len)) {
      stats.stop = stop;
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
