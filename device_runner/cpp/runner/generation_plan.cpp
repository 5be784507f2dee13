#include "generation_plan.h"

#include <algorithm>
#include <filesystem>

namespace trt_edge::runner {
namespace {

RunnerError refused(const Bundle& b, const std::string& message) {
  const std::string source = (std::filesystem::path(b.dir) / "bundle.json").string();
  return RunnerError(ErrorKind::kRequestRefused, source + ": " + message).with_file(source);
}

const char* kContracts =
    "generate needs a causal LM built by the Hugging Face recipe (bundle.json llm) or the "
    "tiny-LLM contract declared in bundle.json generation (tokens, start position, then the "
    "KV caches: examples/tiny_llm/model.py)";

std::string names_of(const std::vector<TensorSpec>& specs) {
  std::string names;
  for (const auto& s : specs) names += (names.empty() ? "" : ", ") + s.name;
  return names.empty() ? "none" : names;
}

bool is_symbol(const std::variant<int64_t, std::string>& d) {
  return std::holds_alternative<std::string>(d);
}

bool is_static(const TensorSpec& spec) {
  return std::none_of(spec.shape.begin(), spec.shape.end(), is_symbol);
}

/// The symbol of a tokens input shaped [1, SYM], or refused naming the shape it has.
std::string tokens_symbol(const Bundle& b, const TensorSpec& tokens) {
  const auto& shape = tokens.shape;
  const bool ok = shape.size() == 2 && !is_symbol(shape[0]) && std::get<int64_t>(shape[0]) == 1 &&
                  is_symbol(shape[1]);
  if (!ok) {
    throw refused(b, "input '" + tokens.name +
                         "' is not shaped [1, seq] (batch 1, a symbolic length): generate feeds "
                         "token ids [1, seq]");
  }
  if (tokens.dtype != "int64" && tokens.dtype != "int32") {
    throw refused(
        b, "input '" + tokens.name + "' is " + tokens.dtype + "; token ids are int64 or int32");
  }
  return std::get<std::string>(shape[1]);
}

/// What the runtime policy says for `phase`; a phase it does not name runs under auto (as the
/// Python `trt_edge.llm.generation.phase_target` does).
PhaseTarget target_of(const Bundle& b, const std::string& phase) {
  auto it = b.phases.find(phase);
  return it == b.phases.end() ? PhaseTarget{} : it->second;
}

/// The extents of `sym` the phase's profile accepts (the union of all profiles under auto).
std::pair<int64_t, int64_t> phase_range(const Bundle& b, const std::string& phase,
                                        const std::string& sym) {
  const PhaseTarget target = target_of(b, phase);
  std::vector<const Profile*> profiles;
  if (target) {
    if (*target < 0 || *target >= static_cast<int64_t>(b.profiles.size())) {
      throw refused(b, "runtime.phases." + phase + " names profile " + std::to_string(*target) +
                           ", the bundle has " + std::to_string(b.profiles.size()));
    }
    profiles.push_back(&b.profiles[static_cast<size_t>(*target)]);
  } else {
    for (const auto& p : b.profiles) profiles.push_back(&p);
  }
  int64_t low = 0, high = -1;
  for (const Profile* p : profiles) {
    auto it = p->dims.find(sym);
    if (it == p->dims.end()) continue;
    low = high < 0 ? it->second.min : std::min(low, it->second.min);
    high = std::max(high, it->second.max);
  }
  if (high < 0) return {1, 1};
  return {low, high};
}

void require_phases(const Bundle& b) {
  std::string missing;
  for (const char* phase : {kPrefillPhase, kDecodePhase}) {
    if (!b.phases.count(phase)) missing += (missing.empty() ? "" : ", ") + std::string(phase);
  }
  if (!missing.empty()) {
    std::string has;
    for (const auto& [name, target] : b.phases) has += (has.empty() ? "" : ", ") + name;
    throw refused(b, "runtime.phases lacks " + missing + " (it has " +
                         (has.empty() ? "none" : has) +
                         "); generate runs the prompt under 'prefill' and each new token under "
                         "'decode': name both in the manifest's runtime.phases and rebuild");
  }
}

void require_float32_logits(const Bundle& b, const TensorSpec& logits) {
  if (logits.dtype != "float32") {
    throw refused(
        b, "output '" + logits.name + "' is " + logits.dtype + "; generate reads float32 logits");
  }
}

void check_prompt_ids(const std::vector<int64_t>& prompt, int64_t vocab, const std::string& where,
                      const std::string& flag) {
  std::vector<int64_t> outside;
  for (int64_t id : prompt) {
    if (id < 0 || id >= vocab) outside.push_back(id);
  }
  if (outside.empty()) return;
  std::string shown;
  for (size_t i = 0; i < outside.size() && i < 8; ++i) {
    shown += (i ? "," : "") + std::to_string(outside[i]);
  }
  if (outside.size() > 8) shown += ",...";
  throw RunnerError(ErrorKind::kUsage, flag + ": " + shown + " outside the vocabulary [0, " +
                                           std::to_string(vocab) + ") (" + where +
                                           "); pass token ids of this model");
}

/// The symbol of a tokens input shaped [batch, SYM] (llm version 3), or refused naming the
/// shape it has.
std::string batched_tokens_symbol(const Bundle& b, const TensorSpec& tokens) {
  const auto& shape = tokens.shape;
  if (shape.size() != 2 || !is_symbol(shape[0]) || !is_symbol(shape[1]) ||
      (tokens.dtype != "int64" && tokens.dtype != "int32")) {
    throw refused(b, "input '" + tokens.name +
                         "' is not an integer tensor shaped [batch, seq] (llm version 3, "
                         "slots): generate feeds token ids [batch, seq]");
  }
  return std::get<std::string>(shape[1]);
}

/// llm version 3: positions [batch, seq] and the slot input [batch] on the tokens' symbols,
/// the logits [batch, vocab]; returns the batch symbol.
std::string check_slot_inputs(const Bundle& b, const LlmSection& llm) {
  const TensorSpec& tokens = b.inputs[llm.tokens_index];
  const TensorSpec& positions = b.inputs[llm.positions_index];
  const TensorSpec& slot = b.inputs[llm.slot_index];
  const std::string batch = std::get<std::string>(tokens.shape[0]);
  if (positions.shape != tokens.shape) {
    throw refused(b, "input '" + positions.name + "' is not shaped like '" + tokens.name +
                         "' [batch, seq] (one cache position per token)");
  }
  if (slot.shape.size() != 1 || !is_symbol(slot.shape[0]) ||
      std::get<std::string>(slot.shape[0]) != batch ||
      (slot.dtype != "int64" && slot.dtype != "int32")) {
    throw refused(b, "input '" + slot.name +
                         "' (llm.inputs.slot) is not an integer tensor shaped [" + batch +
                         "] (one cache slot per row)");
  }
  return batch;
}

/// What every causal-LM plan holds (one conversation or slots): the llm section's roles, the
/// vocabulary and stop ids, the cache length and the prefill profile's range of `sym`.
GenerationPlan causal_lm_plan(const Bundle& b, const std::string& sym) {
  const LlmSection& llm = *b.llm;
  require_float32_logits(b, b.outputs[llm.logits_index]);
  GenerationPlan plan;
  plan.contract = GenerationContract::kCausalLm;
  plan.tokens_index = llm.tokens_index;
  plan.positions_index = llm.positions_index;
  plan.logits_index = llm.logits_index;
  plan.vocab_size = llm.vocab_size;
  plan.eos_token_ids = llm.eos_token_ids;
  std::tie(plan.prefill_low, plan.prefill_high) = phase_range(b, kPrefillPhase, sym);
  plan.max_cache_len = llm.max_cache_len;
  plan.tokens_input = llm.tokens_input;
  plan.positions_input = llm.positions_input;
  return plan;
}

GenerationPlan plan_slots_lm(const Bundle& b) {
  const LlmSection& llm = *b.llm;
  if (b.inputs.size() != 3) {
    throw refused(b, "the method takes " + std::to_string(b.inputs.size()) + " inputs (" +
                         names_of(b.inputs) + "); generate feeds only llm.inputs tokens '" +
                         llm.tokens_input + "', positions '" + llm.positions_input +
                         "' and slot '" + *llm.slot_input + "'");
  }
  const std::string sym = batched_tokens_symbol(b, b.inputs[llm.tokens_index]);
  const std::string batch = check_slot_inputs(b, llm);
  GenerationPlan plan = causal_lm_plan(b, sym);
  plan.slot_index = llm.slot_index;
  plan.slots = llm.slots;
  // Every call of a prompt is one row; a decode step takes up to its profile's batch max.
  const auto [prefill_batch_low, prefill_batch_high] = phase_range(b, kPrefillPhase, batch);
  const auto [decode_batch_low, decode_batch_high] = phase_range(b, kDecodePhase, batch);
  if (prefill_batch_low > 1 || decode_batch_low > 1) {
    throw refused(b, "the prefill and decode profiles must take " + batch + " 1 (they take [" +
                         std::to_string(prefill_batch_low) + ", " +
                         std::to_string(prefill_batch_high) + "] and [" +
                         std::to_string(decode_batch_low) + ", " +
                         std::to_string(decode_batch_high) +
                         "]): a prompt is prefilled one conversation at a time");
  }
  plan.decode_batch_max = std::min<int64_t>(decode_batch_high, llm.slots);
  return plan;
}

GenerationPlan plan_causal_lm(const Bundle& b) {
  const LlmSection& llm = *b.llm;
  // No require_phases here: a causal-LM bundle whose policy lacks prefill or decode runs
  // that phase under auto, as the Python generate does.
  if (llm.slot_input) return plan_slots_lm(b);
  const size_t fed = llm.window_input ? 3 : 2;
  if (b.inputs.size() != fed) {
    throw refused(b, "the method takes " + std::to_string(b.inputs.size()) + " inputs (" +
                         names_of(b.inputs) + "); generate feeds only llm.inputs tokens '" +
                         llm.tokens_input + "' and positions '" + llm.positions_input + "'" +
                         (llm.window_input ? " and window '" + *llm.window_input + "'" : ""));
  }
  const std::string sym = tokens_symbol(b, b.inputs[llm.tokens_index]);
  const TensorSpec& positions = b.inputs[llm.positions_index];
  if (positions.shape.size() != 1 || !is_symbol(positions.shape[0]) ||
      std::get<std::string>(positions.shape[0]) != sym) {
    throw refused(b, "input '" + positions.name + "' is not shaped [" + sym +
                         "] (one cache position per token)");
  }
  if (llm.window_input) {
    // Its own symbol: the window follows the fill, not the call's token count.
    const TensorSpec& window = b.inputs[llm.window_index];
    if (window.shape.size() != 1 || !is_symbol(window.shape[0]) ||
        std::get<std::string>(window.shape[0]) == sym ||
        (window.dtype != "int64" && window.dtype != "int32")) {
      throw refused(b, "input '" + window.name +
                           "' (llm.inputs.window) is not an integer tensor shaped [window] "
                           "with a symbol of its own: generate feeds the attended window "
                           "0..W-1, W the written slots rounded up to llm.window_bucket");
    }
  }
  GenerationPlan plan = causal_lm_plan(b, sym);
  if (llm.window_input) plan.window_index = llm.window_index;
  return plan;
}

GenerationPlan plan_tiny_llm(const Bundle& b) {
  // Declared, never recognised by input names: without the section there is no contract.
  if (!b.generation) {
    throw refused(b, "no llm section and no generation section (the inputs are " +
                         names_of(b.inputs) + "): " + kContracts);
  }
  const GenerationSection& g = *b.generation;
  require_phases(b);
  const TensorSpec& ids = b.inputs[g.tokens_index];
  const TensorSpec& start = b.inputs[g.start_index];
  const std::string sym = tokens_symbol(b, ids);
  if (!ids.values || !start.values) {
    throw refused(b, "inputs '" + ids.name + "' and '" + start.name +
                         "' must declare values (the vocabulary and the context length): " +
                         std::string(kContracts));
  }
  if (start.shape.size() != 1 || is_symbol(start.shape[0]) ||
      std::get<int64_t>(start.shape[0]) != 1 ||
      (start.dtype != "int64" && start.dtype != "int32")) {
    throw refused(b, "input " + start.name + " is not an integer tensor shaped [1]: " +
                         std::string(kContracts));
  }
  GenerationPlan plan;
  plan.contract = GenerationContract::kTinyLlm;
  plan.tokens_index = g.tokens_index;
  plan.positions_index = g.start_index;
  plan.logits_index = g.logits_index;
  // The caches: every other input, in order; each comes back as the next output other than
  // the logits.
  for (size_t i = 0; i < b.inputs.size(); ++i) {
    if (i != g.tokens_index && i != g.start_index) plan.cache_inputs.push_back(i);
  }
  for (size_t i = 0; i < b.outputs.size(); ++i) {
    if (i != g.logits_index) plan.cache_outputs.push_back(i);
  }
  const size_t caches = plan.cache_inputs.size();
  if (plan.cache_outputs.size() < caches) {
    throw refused(b, "the method returns " + std::to_string(b.outputs.size()) +
                         " outputs; the "
                         "tiny-LLM contract returns the logits and each of the " +
                         std::to_string(caches) + " caches it takes");
  }
  plan.cache_outputs.resize(caches);
  for (size_t k = 0; k < caches; ++k) {
    const TensorSpec& in = b.inputs[plan.cache_inputs[k]];
    const TensorSpec& out = b.outputs[plan.cache_outputs[k]];
    if (!is_static(in)) {
      throw refused(b, "cache input '" + in.name + "' has a symbolic shape; caches are static");
    }
    if (out.dtype != in.dtype || out.shape != in.shape) {
      throw refused(b, "output '" + out.name + "' should be the updated cache '" + in.name +
                           "' (same dtype and shape) for generate to feed it back");
    }
  }
  const TensorSpec& logits = b.outputs[g.logits_index];
  require_float32_logits(b, logits);
  if (logits.shape.empty() || is_symbol(logits.shape.back())) {
    throw refused(b, "output '" + logits.name + "' has no static vocabulary dimension (last)");
  }
  plan.vocab_size = ids.values->second;
  std::tie(plan.prefill_low, plan.prefill_high) = phase_range(b, kPrefillPhase, sym);
  plan.max_cache_len = start.values->second;
  plan.tokens_input = ids.name;
  plan.positions_input = start.name;
  return plan;
}

}  // namespace

const char* to_string(GenerationContract contract) noexcept {
  return contract == GenerationContract::kCausalLm ? "causal_lm" : "tiny_llm";
}

GenerationPlan plan_generation(const Bundle& bundle) {
  GenerationPlan plan = bundle.llm ? plan_causal_lm(bundle) : plan_tiny_llm(bundle);
  // Every new token is one decode call, so decode must take one token.
  const auto [decode_low, decode_high] = phase_range(
      bundle, kDecodePhase, std::get<std::string>(bundle.inputs[plan.tokens_index].shape[1]));
  if (decode_low > 1 || decode_high < 1) {
    throw refused(bundle, "the decode phase's profile takes seq [" + std::to_string(decode_low) +
                              ", " + std::to_string(decode_high) +
                              "], not 1: generate feeds one new token per decode call");
  }
  return plan;
}

void check_generation_request(const GenerationPlan& plan, const std::vector<int64_t>& prompt,
                              int64_t max_new_tokens, const RequestFlags& flags) {
  if (prompt.empty()) {
    throw RunnerError(ErrorKind::kUsage, flags.prompt + " is empty: pass at least one token id");
  }
  if (max_new_tokens < 1) {
    throw RunnerError(ErrorKind::kUsage, flags.max_new_tokens + " " +
                                             std::to_string(max_new_tokens) +
                                             ": must be at least 1");
  }
  const bool causal = plan.contract == GenerationContract::kCausalLm;
  check_prompt_ids(prompt, plan.vocab_size,
                   causal ? "bundle.json llm.vocab_size"
                          : "bundle.json io.inputs " + plan.tokens_input + " values",
                   flags.prompt);
  const auto prompt_len = static_cast<int64_t>(prompt.size());
  if (!flags.whole_request_fits) {
    if (prompt_len > plan.max_cache_len) {
      throw RunnerError(ErrorKind::kRequestRefused,
                        "the prompt (" + std::to_string(prompt_len) + " tokens) needs " +
                            std::to_string(prompt_len) + " cache positions; the bundle's " +
                            (causal ? "KV cache holds " : "context is ") +
                            std::to_string(plan.max_cache_len) + ": shorten it")
          .with_input(plan.positions_input);
    }
    return;
  }
  // The last generated token is never fed back: it needs no cache slot.
  const int64_t needed = prompt_len + max_new_tokens - 1;
  if (needed <= plan.max_cache_len) return;
  if (causal) {
    throw RunnerError(
        ErrorKind::kRequestRefused,
        "the prompt (" + std::to_string(prompt.size()) + " tokens) and " + flags.max_new_tokens +
            " " + std::to_string(max_new_tokens) + " need " + std::to_string(needed) +
            " cache positions; the bundle's KV cache holds " + std::to_string(plan.max_cache_len) +
            " (llm.max_cache_len): shorten one of them, or rebuild with a larger "
            "model.huggingface.max_cache_len")
        .with_input(plan.positions_input);
  }
  // As for a causal LM: the calls reach position prompt + N - 2 and write prompt + N - 1
  // slots (start_pos + seq <= context).
  throw RunnerError(ErrorKind::kRequestRefused,
                    "the prompt (" + std::to_string(prompt.size()) + " tokens) and " +
                        flags.max_new_tokens + " " + std::to_string(max_new_tokens) +
                        " exceed the context of " + std::to_string(plan.max_cache_len) +
                        " positions (bundle.json " + plan.positions_input +
                        " values): shorten one of them")
      .with_input(plan.positions_input);
}

GenerationPlan plan_generation(const Bundle& bundle, const std::vector<int64_t>& prompt,
                               int64_t max_new_tokens) {
  // The request's own faults first (as before the plan was split), then the bundle's.
  if (prompt.empty() || max_new_tokens < 1) {
    check_generation_request(GenerationPlan{}, prompt, max_new_tokens, RequestFlags{});
  }
  GenerationPlan plan = plan_generation(bundle);
  check_generation_request(plan, prompt, max_new_tokens, RequestFlags{});
  return plan;
}

std::vector<int64_t> prefill_chunks(int64_t length, int64_t low, int64_t high) {
  if (length < 1) return {};
  if (high < 1 || low > high) return std::vector<int64_t>(static_cast<size_t>(length), 1);
  std::vector<int64_t> chunks;
  int64_t remaining = length;
  while (remaining > high) {
    chunks.push_back(high);
    remaining -= high;
  }
  if (remaining >= low) {
    chunks.push_back(remaining);
  } else if (!chunks.empty() && high - (low - remaining) >= low) {
    chunks.back() -= low - remaining;  // borrow from the previous full chunk
    chunks.push_back(low);
  } else {
    chunks.insert(chunks.end(), static_cast<size_t>(remaining), 1);
  }
  return chunks;
}

}  // namespace trt_edge::runner
