// Generation, step 1 of 4: the plan (generation_plan → prefiller → token_generator →
// generation_stats, as ExecuTorch's TextLLMRunner splits its work). Which I/O contract
// drives the bundle's method, the vocabulary, how many cache positions there are and
// which prompt lengths the prefill phase's profile takes — all read from bundle.json
// alone, before anything loads or runs.
//
// Two I/O contracts:
// - a causal LM (bundle.json `llm`, the Hugging Face recipe): tokens [1, seq] and
//   positions [seq] in (and, built with `attention: filled`, the attended window [W]),
//   logits [1, vocab] out; the KV cache lives inside the program;
// - the tiny-LLM contract (bundle.json `generation`, examples/tiny_llm/model.py): tokens
//   [1, seq], a start position [1] and static KV caches in; logits [1, seq, vocab] and the
//   updated caches out, fed back on the next call; the caches start zeroed.
// A causal LM built with `runtime.slots` N (llm version 3) takes tokens and positions
// [batch, seq] and the slot of each row [batch]: one conversation alone is batch 1 in slot 0.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bundle.h"

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
  std::string tokens_input;     ///< their names, for messages
  std::string positions_input;
  std::optional<size_t> window_index;  ///< causal LM, llm version 2: the window input [W]
  /// Causal LM, llm version 3 (`runtime.slots`): the input naming each row's cache [batch];
  /// tokens and positions are then [batch, seq] and the logits [batch, vocab].
  std::optional<size_t> slot_index;
  int64_t slots = 1;            ///< how many conversations the program holds (1 without slots)
  int64_t decode_batch_max = 1;  ///< the most rows one decode call takes (its profile's batch)
  std::vector<size_t> cache_inputs;   ///< tiny LLM: the cache inputs, in order
  std::vector<size_t> cache_outputs;  ///< tiny LLM: cache k comes back as output cache_outputs[k]
  int64_t vocab_size = 0;
  int64_t max_cache_len = 0;           ///< cache positions (the context): 0 .. max_cache_len - 1
  std::vector<int64_t> eos_token_ids;  ///< empty for the tiny LLM (it has none)
  int64_t prefill_low = 1;             ///< the seq extents the prefill phase's profile accepts
  int64_t prefill_high = 1;
};

/// The plan for `bundle`: RunnerError kRequestRefused for a bundle that fits neither
/// contract, lacks the prefill or decode phase it needs, or whose decode profile does not
/// take one token.
GenerationPlan plan_generation(const Bundle& bundle);

/// How a request's fields are named in messages: the command line's flags, or the
/// service protocol's field names.
struct RequestFlags {
  std::string prompt = "--prompt-ids";
  std::string max_new_tokens = "--max-new-tokens";
  /// true (--generate): the prompt and every new token must fit the cache, or the request is
  /// refused before it runs; false (--serve): only the prompt must, generation stops with
  /// "cache_full" when the cache is.
  bool whole_request_fits = true;
};

/// A request's own faults against `plan`: kUsage for an empty prompt, max_new_tokens < 1 or a
/// prompt id outside the vocabulary; kRequestRefused when the cache cannot hold it (naming
/// both lengths and the limit).
void check_generation_request(const GenerationPlan& plan, const std::vector<int64_t>& prompt,
                              int64_t max_new_tokens, const RequestFlags& flags);

/// plan_generation(bundle) and check_generation_request with the command line's flags.
GenerationPlan plan_generation(const Bundle& bundle, const std::vector<int64_t>& prompt,
                               int64_t max_new_tokens);

/// Sizes of the calls a prompt of `length` is run in: calls the prefill profile takes
/// ([low, high]) where possible, the leftover it cannot take as 1-token calls (decode).
/// The same split as trt_edge.llm.generation.prefill_chunks.
std::vector<int64_t> prefill_chunks(int64_t length, int64_t low, int64_t high);

}  // namespace trt_edge::runner
