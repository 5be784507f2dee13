// Greedy generation on the device runner: `trt-edge-run --generate`.
//
// The loop an application writes over ProfiledModule, as trt_edge.llm.generation
// (`greedy_generate`, `prefill_chunks`) does in Python: the prompt runs under the
// bundle's `prefill` phase — in chunks when it is longer than that phase's profile
// accepts, positions continuing — and each new token under `decode`, every call inside
// the phase's OptimizationProfileGuard, so the profile is the runtime policy's choice for
// the phase and the call's shape (the same per-phase guards as `--phase`). Greedy: argmax
// over the last logits row, ties to the lowest id (numpy's argmax). It stops at an eos id,
// which is kept, or after max_new_tokens. One loaded method serves the whole conversation.
//
// Two I/O contracts, both identified from bundle.json alone (nothing is loaded to decide):
// - a causal LM (bundle.json `llm`, the Hugging Face recipe): tokens [1, seq] and
//   positions [seq] in, logits [1, vocab] out; the KV cache lives inside the program;
// - the tiny-LLM contract (examples/tiny_llm/model.py, no `llm` section): input_ids
//   [1, seq], start_pos [1] and static KV caches in; logits [1, seq, vocab] and the
//   updated caches out, fed back on the next call; the caches start zeroed.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bundle.h"
#include "npy.h"
#include "profiled_module.h"

namespace trt_edge::runner {

inline constexpr const char* kPrefillPhase = "prefill";
inline constexpr const char* kDecodePhase = "decode";

enum class GenerationContract { kCausalLm, kTinyLlm };

const char* to_string(GenerationContract contract) noexcept;

/// How generation drives a bundle's method, read from bundle.json.
struct GenerationPlan {
  GenerationContract contract = GenerationContract::kCausalLm;
  size_t tokens_index = 0;     ///< the input that takes token ids [1, seq]
  size_t positions_index = 0;  ///< cache_position [seq] (causal LM) or start_pos [1] (tiny LLM)
  size_t logits_index = 0;     ///< the output holding the logits
  std::vector<size_t>
      cache_inputs;  ///< tiny LLM: the cache inputs; cache k comes back as output 1 + k
  int64_t vocab_size = 0;
  std::vector<int64_t> eos_token_ids;  ///< empty for the tiny LLM (it has none)
  int64_t prefill_low = 1;             ///< the seq extents the prefill phase's profile accepts
  int64_t prefill_high = 1;
};

/// The plan for `prompt` and `max_new_tokens` on `bundle`, checked before anything loads
/// or runs: RunnerError kUsage for a prompt id outside the vocabulary; kRequestRefused for
/// a bundle that fits neither contract, lacks the prefill or decode phase, or whose cache
/// cannot hold the prompt and the new tokens (naming both lengths and the limit).
GenerationPlan plan_generation(const Bundle& bundle, const std::vector<int64_t>& prompt,
                               int64_t max_new_tokens);

/// Sizes of the calls a prompt of `length` is run in: calls the prefill profile takes
/// ([low, high]) where possible, the leftover it cannot take as 1-token calls (decode).
/// The same split as trt_edge.llm.generation.prefill_chunks.
std::vector<int64_t> prefill_chunks(int64_t length, int64_t low, int64_t high);

/// The index of the largest value of the last row (last dimension) of float32 `logits`;
/// the lowest index among equals, and the first NaN if there is one (numpy's argmax).
int64_t argmax_last_row(const Array& logits);

/// One execution of the method during generation.
struct GenerationStep {
  std::string phase;
  int64_t profile = 0;
  int64_t start = 0;  ///< the first position written
  int64_t seq = 0;
  double ms = 0.0;
};

struct GenerationResult {
  std::vector<int64_t> prompt_ids;
  std::vector<int64_t> tokens;
  std::vector<GenerationStep> steps;
  std::string stop = "max_new_tokens";  ///< or "eos"
  double first_token_s = 0.0;           ///< from the first prompt call to the first token
  double total_s = 0.0;                 ///< from the first prompt call to the last token

  /// How many calls carried the prompt (each later call made one new token).
  size_t prompt_calls() const;
  /// The timings trt-edge generate --json prints, under the same names.
  nlohmann::ordered_json timings() const;
};

/// Runs the plan on the loaded module: prefill (chunked), then decode argmax tokens until an
/// eos id or `max_new_tokens`. RunnerError from the module as for any execution.
GenerationResult greedy_generate(ProfiledModule& module, const GenerationPlan& plan,
                                 const std::vector<int64_t>& prompt, int64_t max_new_tokens);

/// The generation fields of the --json document: "request", "contract", "prompt_ids",
/// "max_new_tokens", "tokens", "stop", "steps" [{"phase", "profile", "start", "seq", "ms"}],
/// "timings".
nlohmann::ordered_json generation_json(const GenerationPlan& plan, const GenerationResult& result,
                                       int64_t max_new_tokens);

/// The summary printed on stderr in plain mode: prefill, decode, stop (one line each).
std::vector<std::string> generation_summary(const GenerationResult& result,
                                            const std::string& mode);

}  // namespace trt_edge::runner
