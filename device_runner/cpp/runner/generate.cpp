#include "generate.h"

#include <chrono>
#include <optional>

namespace trt_edge::runner {

int64_t reusable_prefix(const std::vector<int64_t>& cached, const std::vector<int64_t>& prompt) {
  if (prompt.empty()) return 0;
  size_t n = 0;
  const size_t limit = std::min(cached.size(), prompt.size() - 1);
  while (n < limit && cached[n] == prompt[n]) ++n;
  return static_cast<int64_t>(n);
}

StopRule stop_rule_for(const GenerationPlan& plan, const GenerationRequest& request) {
  StopRule rule;
  rule.max_new_tokens = request.max_new_tokens;
  if (!request.ignore_eos) {
    rule.eos_token_ids.insert(plan.eos_token_ids.begin(), plan.eos_token_ids.end());
  }
  rule.stop_token_ids.insert(request.stop_token_ids.begin(), request.stop_token_ids.end());
  return rule;
}

SlotChoice choose_slot(const std::vector<SlotView>& slots, const std::vector<int64_t>& prompt,
                       bool reuse) {
  std::optional<SlotChoice> best;
  for (size_t k = 0; k < slots.size(); ++k) {
    if (slots[k].busy) continue;
    const int64_t reused = reuse ? reusable_prefix(*slots[k].cached, prompt) : 0;
    const bool older = best && slots[k].last_used < slots[best->slot].last_used;
    const bool better = !best || reused > best->reused || (reused == best->reused && older);
    if (better) best = SlotChoice{k, reused};
  }
  return best.value_or(SlotChoice{});
}

Generator::Generator(ProfiledModule& module, GenerationPlan plan)
    : state_(module, std::move(plan)) {}

GenerationResult Generator::generate(const GenerationRequest& request,
                                     const TokenCallbacks& callbacks) {
  using clock = std::chrono::steady_clock;
  const GenerationPlan& plan = state_.plan();
  GenerationResult stats;
  stats.prompt_ids = request.prompt;
  const int64_t reused = request.reuse_prefix ? reusable_prefix(state_.cached(), request.prompt) : 0;
  if (reused == 0) state_.reset();
  stats.reused_prompt_tokens = reused;

  const StopRule rule = stop_rule_for(plan, request);
  Sampler sampler(request.sampling);

  const auto started = clock::now();
  auto since = [&] { return std::chrono::duration<double>(clock::now() - started).count(); };
  try {
    Array logits = prefill(state_, request.prompt, reused, stats);
    generate_tokens(state_, sampler, std::move(logits), static_cast<int64_t>(request.prompt.size()),
                    request.prompt, rule, callbacks, stats, since);
  } catch (...) {
    state_.forget();
    throw;
  }
  return stats;
}

}  // namespace trt_edge::runner
