// What generation keeps between the method's calls (ExecuTorch's TextDecoderRunner and
// IOManager in one): the loaded method, the phase requests, the inputs of the contract
// (the tiny LLM's caches fed back from its outputs) and the tokens the KV cache holds —
// the last conversation, which a later request may continue (prefix reuse).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "generation_plan.h"
#include "generation_stats.h"
#include "npy.h"
#include "profiled_module.h"

namespace trt_edge::runner {

class GenerationState {
 public:
  GenerationState(ProfiledModule& module, GenerationPlan plan);

  const GenerationPlan& plan() const noexcept { return plan_; }
  ProfiledModule& module() noexcept { return module_; }

  /// One call of the method under `phase`'s guard: `ids` at positions start, start + 1, ...
  /// Records the step in `stats`; returns the logits. The cache then holds cached()[0, start)
  /// and `ids`. RunnerError as any execution.
  Array call(const char* phase, const std::vector<int64_t>& ids, int64_t start,
             GenerationResult& stats);

  /// One call of a slots program (llm version 3) under `phase`'s guard: row k feeds
  /// `rows[k].ids` at positions rows[k].start, ... into cache slot rows[k].slot (all rows of
  /// one length). Returns the logits [rows, vocab]; `profile` and `ms` say how it ran. The
  /// single-conversation cached() is not touched: the caller keeps each slot's tokens.
  struct Row {
    std::vector<int64_t> ids;
    int64_t start = 0;
    int64_t slot = 0;
  };
  struct RowsCall {
    Array logits;
    int64_t profile = 0;
    double ms = 0.0;
  };
  RowsCall call_rows(const char* phase, const std::vector<Row>& rows);

  /// The tokens whose keys and values the cache holds, position by position.
  const std::vector<int64_t>& cached() const noexcept { return cached_; }

  /// A cold start: the tiny LLM's caches zeroed, nothing held. (A causal LM's in-program
  /// cache needs no clearing: its masks hide every slot past the position being computed.)
  void reset();

  /// After a failed call: nothing the cache holds can be trusted.
  void forget() noexcept { cached_.clear(); }

 private:
  ProfiledModule& module_;
  GenerationPlan plan_;
  Request prefill_;
  Request decode_;
  std::vector<Array> inputs_;
  std::vector<int64_t> cached_;
};

/// The last row (last dimension) of float32 `logits`: the next token's logits.
std::vector<float> last_row(const Array& logits);

/// Row `k` of float32 `logits` [rows, vocab] (a batched call's logits of its row k).
std::vector<float> logits_row(const Array& logits, int64_t k);

/// The index of the largest value of the last row of `logits` (sampler.h's argmax).
int64_t argmax_last_row(const Array& logits);

}  // namespace trt_edge::runner
