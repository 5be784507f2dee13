// The causal-LM rule every runner applies to a bundle with an `llm` section: a call may
// write only cache slots that exist. A call at `start` with `seq` tokens needs
// `start >= 0` and `start + seq <= max_cache_len`; past the cache, ExecuTorch fails inside
// `index_put` with an opaque error (0x12), so the runner refuses first, naming the range.
// Mirrors trt_edge_runner.runner.Runner._check_cache_positions (the same message). With
// `attention: filled` (llm version 2) the attended window must also cover every position
// the call writes.
#pragma once

#include "bundle.h"
#include "npy.h"

namespace trt_edge::runner {

/// RunnerError (kRequestRefused) naming the input, the position, the call's start and seq
/// and the cache's range when any element of `positions` lies outside [0, max_cache_len).
void check_cache_positions(const LlmSection& llm, const Array& positions);

/// With a window input (llm section version 2): RunnerError (kRequestRefused) when the
/// window is shorter than the positions the call writes — a query whose own slot lies past
/// the window would attend without itself, silently wrong. Mirrors
/// trt_edge_runner.runner.Runner._check_cache_window (the same message). Positions outside
/// the cache are check_cache_positions' to refuse; call it first.
void check_cache_window(const LlmSection& llm, const Array& positions, const Array& window);

/// With a slot input (llm section version 3): RunnerError (kRequestRefused) when a row names
/// a slot outside [0, llm.slots) or two rows name one slot — outside, the call would write
/// past the cache buffers; twice, two rows would mix. Mirrors
/// trt_edge_runner.runner.Runner._check_cache_slots (the same message).
void check_cache_slots(const LlmSection& llm, const Array& slots);

}  // namespace trt_edge::runner
