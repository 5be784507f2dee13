#include "prefiller.h"

namespace trt_edge::runner {

Array prefill(GenerationState& state, const std::vector<int64_t>& prompt, int64_t from,
              GenerationResult& stats) {
  const GenerationPlan& plan = state.plan();
  int64_t position = from;
  Array logits;
  const auto rest = static_cast<int64_t>(prompt.size()) - from;
  for (int64_t size : prefill_chunks(rest, plan.prefill_low, plan.prefill_high)) {
    const char* phase =
        plan.prefill_low <= size && size <= plan.prefill_high ? kPrefillPhase : kDecodePhase;
    const auto first = prompt.begin() + position;
    logits = state.call(phase, std::vector<int64_t>(first, first + size), position, stats);
    position += size;
  }
  return logits;
}

}  // namespace trt_edge::runner
