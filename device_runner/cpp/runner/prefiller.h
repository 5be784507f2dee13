// Generation, step 2 of 4: the prompt (ExecuTorch's TextPrefiller). The tokens the cache
// does not hold yet run under the `prefill` phase's guard, in the chunks its profile takes
// (prefill_chunks), positions continuing; a leftover it cannot take runs as 1-token calls
// under `decode`.
#pragma once

#include <cstdint>
#include <vector>

#include "generation_state.h"

namespace trt_edge::runner {

/// Runs prompt[from, end) at positions from, from + 1, ...; returns the last call's logits.
/// `from` < prompt.size().
Array prefill(GenerationState& state, const std::vector<int64_t>& prompt, int64_t from,
              GenerationResult& stats);

}  // namespace trt_edge::runner
