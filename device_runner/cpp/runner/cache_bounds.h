// The causal-LM rule every runner applies to a bundle with an `llm` section: a call may
// write only cache slots that exist. A call at `start` with `seq` tokens needs
// `start >= 0` and `start + seq <= max_cache_len`; past the cache, ExecuTorch fails inside
// `index_put` with an opaque error (0x12), so the runner refuses first, naming the range.
// Mirrors trt_edge_runner.runner.Runner._check_cache_positions (the same message).
#pragma once

#include "bundle.h"
#include "npy.h"

namespace trt_edge::runner {

/// RunnerError (kRequestRefused) naming the input, the position, the call's start and seq
/// and the cache's range when any element of `positions` lies outside [0, max_cache_len).
void check_cache_positions(const LlmSection& llm, const Array& positions);

}  // namespace trt_edge::runner
