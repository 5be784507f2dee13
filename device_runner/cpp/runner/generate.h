// Generation on the device runner: the one loop `trt-edge-run --generate` and
// `trt-edge-run --serve` both use, split as ExecuTorch's TextLLMRunner splits it:
// generation_plan.h (which contract, vocabulary, cache length, chunking) → prefiller.h (the
// prompt under `prefill`, in chunks) → token_generator.h (each token sampled, streamed,
// fed back under `decode`) → generation_stats.h (steps, timings, documents). Every call
// runs inside its phase's OptimizationProfileGuard, so the profile is the runtime policy's
// choice for the phase and the call's shape.
//
// Prefix reuse: the Generator keeps the last conversation's cache (prompt plus the
// generated tokens fed back). A request whose prompt shares a prefix with it prefills only
// the rest (at least the last prompt token, for its logits); otherwise it starts cold.
// Exact, because both contracts mask attention by absolute position: a slot past the
// position being computed is never attended to, whatever an earlier conversation left
// there (tests/llm/test_cpp_serve.py compares reuse with cold runs token for token).
#pragma once

#include <cstdint>
#include <vector>

#include "generation_plan.h"
#include "generation_state.h"
#include "generation_stats.h"
#include "prefiller.h"
#include "profiled_module.h"
#include "sampler.h"
#include "token_generator.h"

namespace trt_edge::runner {

struct GenerationRequest {
  std::vector<int64_t> prompt;
  int64_t max_new_tokens = 16;
  SamplingParams sampling;
  std::vector<int64_t> stop_token_ids;
  bool ignore_eos = false;
  bool reuse_prefix = false;  ///< continue the kept cache where the prompt shares its prefix
};

class Generator {
 public:
  /// `module` must outlive the generator; `plan` is plan_generation(module.bundle()).
  Generator(ProfiledModule& module, GenerationPlan plan);

  const GenerationPlan& plan() const noexcept { return state_.plan(); }

  /// Runs one request (already checked with check_generation_request). RunnerError from the
  /// module as for any execution; the kept cache is then forgotten.
  GenerationResult generate(const GenerationRequest& request, const TokenCallbacks& callbacks = {});

 private:
  GenerationState state_;
};

/// How many leading tokens of `prompt` the cache holding `cached` can be reused for: their
/// common prefix, at most prompt.size() - 1 (the last prompt token always runs).
int64_t reusable_prefix(const std::vector<int64_t>& cached, const std::vector<int64_t>& prompt);

/// When `request` stops (besides a cancel): its token budget, the bundle's eos ids unless it
/// ignores them, its own stop ids.
StopRule stop_rule_for(const GenerationPlan& plan, const GenerationRequest& request);

/// What a slot of a slots program (llm version 3) offers a new request: the tokens its cache
/// holds, when it was last used (a tick; lower is older) and whether a request holds it.
struct SlotView {
  const std::vector<int64_t>* cached = nullptr;
  uint64_t last_used = 0;
  bool busy = false;
};

struct SlotChoice {
  size_t slot = 0;
  int64_t reused = 0;  ///< leading prompt tokens the slot's cache already holds
};

/// The free slot a request with `prompt` goes to (at least one of `slots` is free): with
/// `reuse`, the one whose cached tokens share the longest reusable prefix with the prompt;
/// on a tie or no match, and without `reuse` (a cold start), the least recently used.
SlotChoice choose_slot(const std::vector<SlotView>& slots, const std::vector<int64_t>& prompt,
                       bool reuse);

}  // namespace trt_edge::runner
