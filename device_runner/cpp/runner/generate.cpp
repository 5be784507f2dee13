#include "generate.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <set>
#include <sstream>

#include "stage.h"

namespace trt_edge::runner {
namespace {

using Json = nlohmann::ordered_json;

RunnerError refused(const Bundle& b, const std::string& message) {
  const std::string source = (std::filesystem::path(b.dir) / "bundle.json").string();
  return RunnerError(ErrorKind::kRequestRefused, source + ": " + message).with_file(source);
}

const char* kContracts =
    "generate needs a causal LM built by the Hugging Face recipe (bundle.json llm) or the "
    "tiny-LLM contract (inputs input_ids, start_pos, then the KV caches: "
    "examples/tiny_llm/model.py)";

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

void check_prompt_ids(const std::vector<int64_t>& prompt, int64_t vocab, const std::string& where) {
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
  throw RunnerError(ErrorKind::kUsage, "--prompt-ids: " + shown + " outside the vocabulary [0, " +
                                           std::to_string(vocab) + ") (" + where +
                                           "); pass token ids of this model");
}

GenerationPlan plan_causal_lm(const Bundle& b, const std::vector<int64_t>& prompt,
                              int64_t max_new_tokens) {
  const LlmSection& llm = *b.llm;
  // No require_phases here: a causal-LM bundle whose policy lacks prefill or decode runs
  // that phase under auto, as the Python generate does.
  if (b.inputs.size() != 2) {
    throw refused(b, "the method takes " + std::to_string(b.inputs.size()) + " inputs (" +
                         names_of(b.inputs) + "); generate feeds only llm.inputs tokens '" +
                         llm.tokens_input + "' and positions '" + llm.positions_input + "'");
  }
  const std::string sym = tokens_symbol(b, b.inputs[llm.tokens_index]);
  const TensorSpec& positions = b.inputs[llm.positions_index];
  if (positions.shape.size() != 1 || !is_symbol(positions.shape[0]) ||
      std::get<std::string>(positions.shape[0]) != sym) {
    throw refused(b, "input '" + positions.name + "' is not shaped [" + sym +
                         "] (one cache position per token)");
  }
  require_float32_logits(b, b.outputs[llm.logits_index]);
  GenerationPlan plan;
  plan.contract = GenerationContract::kCausalLm;
  plan.tokens_index = llm.tokens_index;
  plan.positions_index = llm.positions_index;
  plan.logits_index = llm.logits_index;
  plan.vocab_size = llm.vocab_size;
  plan.eos_token_ids = llm.eos_token_ids;
  std::tie(plan.prefill_low, plan.prefill_high) = phase_range(b, kPrefillPhase, sym);
  check_prompt_ids(prompt, llm.vocab_size, "bundle.json llm.vocab_size");
  // The last generated token is never fed back: it needs no cache slot.
  const int64_t needed = static_cast<int64_t>(prompt.size()) + max_new_tokens - 1;
  if (needed > llm.max_cache_len) {
    throw RunnerError(
        ErrorKind::kRequestRefused,
        "the prompt (" + std::to_string(prompt.size()) + " tokens) and --max-new-tokens " +
            std::to_string(max_new_tokens) + " need " + std::to_string(needed) +
            " cache positions; the bundle's KV cache holds " + std::to_string(llm.max_cache_len) +
            " (llm.max_cache_len): shorten one of them, or rebuild with a larger "
            "model.huggingface.max_cache_len")
        .with_input(llm.positions_input);
  }
  return plan;
}

GenerationPlan plan_tiny_llm(const Bundle& b, const std::vector<int64_t>& prompt,
                             int64_t max_new_tokens) {
  if (b.inputs.size() < 3 || b.inputs[0].name != "input_ids" || b.inputs[1].name != "start_pos") {
    throw refused(b,
                  "no llm section, and the inputs are " + names_of(b.inputs) + ": " + kContracts);
  }
  require_phases(b);
  const TensorSpec& ids = b.inputs[0];
  const TensorSpec& start = b.inputs[1];
  const std::string sym = tokens_symbol(b, ids);
  if (!ids.values || !start.values) {
    throw refused(b,
                  "input_ids and start_pos must declare values (the vocabulary and the "
                  "context length): " +
                      std::string(kContracts));
  }
  if (start.shape.size() != 1 || is_symbol(start.shape[0]) ||
      std::get<int64_t>(start.shape[0]) != 1 ||
      (start.dtype != "int64" && start.dtype != "int32")) {
    throw refused(
        b, "input start_pos is not an integer tensor shaped [1]: " + std::string(kContracts));
  }
  GenerationPlan plan;
  plan.contract = GenerationContract::kTinyLlm;
  plan.tokens_index = 0;
  plan.positions_index = 1;
  plan.logits_index = 0;
  const size_t caches = b.inputs.size() - 2;
  if (b.outputs.size() < 1 + caches) {
    throw refused(b, "the method returns " + std::to_string(b.outputs.size()) +
                         " outputs; the "
                         "tiny-LLM contract returns the logits, then each of the " +
                         std::to_string(caches) + " caches it takes");
  }
  for (size_t k = 0; k < caches; ++k) {
    const TensorSpec& in = b.inputs[2 + k];
    const TensorSpec& out = b.outputs[1 + k];
    if (!is_static(in)) {
      throw refused(b, "cache input '" + in.name + "' has a symbolic shape; caches are static");
    }
    if (out.dtype != in.dtype || out.shape != in.shape) {
      throw refused(b, "output '" + out.name + "' should be the updated cache '" + in.name +
                           "' (same dtype and shape) for generate to feed it back");
    }
    plan.cache_inputs.push_back(2 + k);
  }
  const TensorSpec& logits = b.outputs[0];
  require_float32_logits(b, logits);
  if (logits.shape.empty() || is_symbol(logits.shape.back())) {
    throw refused(b, "output '" + logits.name + "' has no static vocabulary dimension (last)");
  }
  plan.vocab_size = ids.values->second;
  std::tie(plan.prefill_low, plan.prefill_high) = phase_range(b, kPrefillPhase, sym);
  check_prompt_ids(prompt, plan.vocab_size, "bundle.json io.inputs input_ids values");
  const int64_t context = start.values->second;
  // As for a causal LM: the last generated token is never fed back, so the calls reach
  // position prompt + N - 2 and write prompt + N - 1 slots (start_pos + seq <= context).
  if (static_cast<int64_t>(prompt.size()) + max_new_tokens - 1 > context) {
    throw RunnerError(ErrorKind::kRequestRefused,
                      "the prompt (" + std::to_string(prompt.size()) +
                          " tokens) and --max-new-tokens " + std::to_string(max_new_tokens) +
                          " exceed the context of " + std::to_string(context) +
                          " positions (bundle.json start_pos values): shorten one of them")
        .with_input("start_pos");
  }
  return plan;
}

/// A token-id or position array of `dtype` (int64 or int32) holding `values`, shaped `shape`.
Array integers(const std::string& dtype, std::vector<int64_t> shape,
               const std::vector<int64_t>& values) {
  Array a;
  a.dtype = dtype;
  a.shape = std::move(shape);
  const size_t item = dtype == "int32" ? sizeof(int32_t) : sizeof(int64_t);
  a.data.resize(values.size() * item);
  for (size_t k = 0; k < values.size(); ++k) {
    if (item == sizeof(int32_t)) {
      const auto v = static_cast<int32_t>(values[k]);
      std::memcpy(a.data.data() + k * item, &v, item);
    } else {
      std::memcpy(a.data.data() + k * item, &values[k], item);
    }
  }
  return a;
}

Array zeros(const Bundle& b, const TensorSpec& spec) {
  Array a;
  a.dtype = spec.dtype;
  a.shape = b.shape_of(spec, {});
  a.data.assign(static_cast<size_t>(a.numel()) * dtype_size(spec.dtype), 0);
  return a;
}

double round_to(double value, int digits) {
  const double scale = std::pow(10.0, digits);
  return std::round(value * scale) / scale;
}

/// Runs `module.execute` under the guard the phase's request needs: the guard records the
/// request for this thread, the module resolves it against the call's shape.
RunResult execute_under(ProfiledModule& module, const Request& request,
                        const std::vector<Array>& inputs) {
  return guarded(request, [&] { return module.execute(inputs); });
}

std::string profiles_text(const std::vector<GenerationStep>& steps) {
  std::set<int64_t> profiles;
  for (const auto& s : steps) profiles.insert(s.profile);
  std::string text = "[";
  for (int64_t p : profiles) text += (text.size() > 1 ? ", " : "") + std::to_string(p);
  return text + "]";
}

std::string number_or_none(const Json& value) {
  if (value.is_null()) return "None";
  std::ostringstream out;
  out << value.get<double>();
  return out.str();
}

}  // namespace

const char* to_string(GenerationContract contract) noexcept {
  return contract == GenerationContract::kCausalLm ? "causal_lm" : "tiny_llm";
}

GenerationPlan plan_generation(const Bundle& bundle, const std::vector<int64_t>& prompt,
                               int64_t max_new_tokens) {
  if (prompt.empty()) {
    throw RunnerError(ErrorKind::kUsage, "--prompt-ids is empty: pass at least one token id");
  }
  if (max_new_tokens < 1) {
    throw RunnerError(ErrorKind::kUsage, "--max-new-tokens " + std::to_string(max_new_tokens) +
                                             ": must be at least 1");
  }
  GenerationPlan plan = bundle.llm ? plan_causal_lm(bundle, prompt, max_new_tokens)
                                   : plan_tiny_llm(bundle, prompt, max_new_tokens);
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

int64_t argmax_last_row(const Array& logits) {
  if (logits.dtype != "float32" || logits.shape.empty() || logits.shape.back() < 1) {
    throw RunnerError(ErrorKind::kExecutionFailed,
                      "the logits output is " + logits.dtype + " shaped with " +
                          std::to_string(logits.shape.size()) +
                          " dims; generate reads float32 logits with a vocabulary dimension");
  }
  const int64_t row = logits.shape.back();
  const int64_t first = logits.numel() - row;
  auto at = [&](int64_t k) {
    float v = 0.0f;
    std::memcpy(&v, logits.data.data() + static_cast<size_t>(first + k) * sizeof(float),
                sizeof(float));
    return v;
  };
  int64_t best = 0;
  float best_value = at(0);
  if (std::isnan(best_value)) return 0;
  for (int64_t k = 1; k < row; ++k) {
    const float v = at(k);
    if (std::isnan(v)) return k;
    if (v > best_value) {
      best = k;
      best_value = v;
    }
  }
  return best;
}

size_t GenerationResult::prompt_calls() const {
  int64_t covered = 0;
  size_t calls = 0;
  for (const auto& step : steps) {
    if (covered >= static_cast<int64_t>(prompt_ids.size())) break;
    covered += step.seq;
    ++calls;
  }
  return calls;
}

Json GenerationResult::timings() const {
  // The prompt's calls count as prefill whatever phase ran them: a 1-token prompt, or a
  // chunk leftover the prefill profile cannot take, runs under decode but is still prompt.
  double prefill_ms = 0.0, decode_ms = 0.0;
  const size_t first_decode = prompt_calls();
  for (size_t i = 0; i < first_decode; ++i) prefill_ms += steps[i].ms;
  const size_t decode_calls = steps.size() - first_decode;
  for (size_t i = first_decode; i < steps.size(); ++i) decode_ms += steps[i].ms;
  const double decode_s = decode_ms / 1e3;
  auto or_null = [](bool known, double value) { return known ? Json(value) : Json(nullptr); };
  return Json{
      {"prefill_ms", round_to(prefill_ms, 3)},
      {"time_to_first_token_ms", round_to(first_token_s * 1e3, 3)},
      {"decode_ms_per_token",
       or_null(decode_calls > 0,
               round_to(decode_ms / static_cast<double>(decode_calls ? decode_calls : 1), 3))},
      {"decode_tokens_per_s",
       or_null(decode_s > 0,
               round_to(static_cast<double>(decode_calls) / (decode_s > 0 ? decode_s : 1), 2))},
      {"tokens_per_s",
       or_null(total_s > 0,
               round_to(static_cast<double>(tokens.size()) / (total_s > 0 ? total_s : 1), 2))},
      {"total_ms", round_to(total_s * 1e3, 3)}};
}

GenerationResult greedy_generate(ProfiledModule& module, const GenerationPlan& plan,
                                 const std::vector<int64_t>& prompt, int64_t max_new_tokens) {
  using clock = std::chrono::steady_clock;
  const Bundle& b = module.bundle();
  auto request_for = [&](const char* phase) {
    return b.phases.count(phase) ? module.request_for_phase(phase) : Request::automatic();
  };
  const Request prefill = request_for(kPrefillPhase);
  const Request decode = request_for(kDecodePhase);
  const std::string& ids_dtype = b.inputs[plan.tokens_index].dtype;
  const std::string& positions_dtype = b.inputs[plan.positions_index].dtype;
  const bool causal = plan.contract == GenerationContract::kCausalLm;

  std::vector<Array> inputs(b.inputs.size());
  for (size_t index : plan.cache_inputs) inputs[index] = zeros(b, b.inputs[index]);
  GenerationResult result;
  result.prompt_ids = prompt;

  auto call = [&](const char* phase, const std::vector<int64_t>& ids, int64_t start) -> Array {
    const auto n = static_cast<int64_t>(ids.size());
    inputs[plan.tokens_index] = integers(ids_dtype, {1, n}, ids);
    if (causal) {
      std::vector<int64_t> positions(ids.size());
      for (int64_t k = 0; k < n; ++k) positions[static_cast<size_t>(k)] = start + k;
      inputs[plan.positions_index] = integers(positions_dtype, {n}, positions);
    } else {
      inputs[plan.positions_index] = integers(positions_dtype, {1}, {start});
    }
    enter_stage(std::string("generating: ") + phase + " at position " + std::to_string(start));
    const auto t0 = clock::now();
    RunResult run =
        execute_under(module, std::strcmp(phase, kPrefillPhase) == 0 ? prefill : decode, inputs);
    const double ms = std::chrono::duration<double, std::milli>(clock::now() - t0).count();
    result.steps.push_back(GenerationStep{phase, run.profile, start, n, round_to(ms, 3)});
    const size_t needed = causal ? plan.logits_index + 1 : 1 + plan.cache_inputs.size();
    if (run.outputs.size() < needed) {
      throw RunnerError(ErrorKind::kExecutionFailed,
                        b.dir + "/model.pte: method '" + b.method + "' returned " +
                            std::to_string(run.outputs.size()) +
                            " tensor outputs, generate needs " + std::to_string(needed) +
                            " (bundle.json io.outputs)");
    }
    for (size_t k = 0; k < plan.cache_inputs.size(); ++k) {
      inputs[plan.cache_inputs[k]] = std::move(run.outputs[1 + k]);
    }
    return std::move(run.outputs[plan.logits_index]);
  };

  const std::set<int64_t> eos(plan.eos_token_ids.begin(), plan.eos_token_ids.end());
  const auto started = clock::now();
  auto since = [&] { return std::chrono::duration<double>(clock::now() - started).count(); };
  int64_t position = 0;
  Array logits;
  for (int64_t size :
       prefill_chunks(static_cast<int64_t>(prompt.size()), plan.prefill_low, plan.prefill_high)) {
    const char* phase =
        plan.prefill_low <= size && size <= plan.prefill_high ? kPrefillPhase : kDecodePhase;
    const auto from = prompt.begin() + position;
    logits = call(phase, std::vector<int64_t>(from, from + size), position);
    position += size;
  }
  int64_t token = argmax_last_row(logits);
  result.first_token_s = since();
  result.tokens.push_back(token);
  while (!eos.count(token) && static_cast<int64_t>(result.tokens.size()) < max_new_tokens) {
    logits = call(kDecodePhase, {token}, position);
    position += 1;
    token = argmax_last_row(logits);
    result.tokens.push_back(token);
  }
  result.total_s = since();
  result.stop = eos.count(token) ? "eos" : "max_new_tokens";
  return result;
}

Json generation_json(const GenerationPlan& plan, const GenerationResult& result,
                     int64_t max_new_tokens) {
  Json steps = Json::array();
  for (const auto& s : result.steps) {
    steps.push_back(Json{{"phase", s.phase},
                         {"profile", s.profile},
                         {"start", s.start},
                         {"seq", s.seq},
                         {"ms", s.ms}});
  }
  return Json{{"request", "generate"},
              {"contract", to_string(plan.contract)},
              {"prompt_ids", result.prompt_ids},
              {"max_new_tokens", max_new_tokens},
              {"tokens", result.tokens},
              {"stop", result.stop},
              {"steps", steps},
              {"timings", result.timings()}};
}

std::vector<std::string> generation_summary(const GenerationResult& result,
                                            const std::string& mode) {
  const Json timings = result.timings();
  const size_t split = result.prompt_calls();
  const std::vector<GenerationStep> prompt_steps(
      result.steps.begin(), result.steps.begin() + static_cast<std::ptrdiff_t>(split));
  const std::vector<GenerationStep> decode_steps(
      result.steps.begin() + static_cast<std::ptrdiff_t>(split), result.steps.end());
  std::vector<std::string> lines;
  std::ostringstream line;
  line << "prefill: " << result.prompt_ids.size() << " token(s) in " << prompt_steps.size()
       << " call(s) on profile(s) " << profiles_text(prompt_steps) << ", "
       << number_or_none(timings["prefill_ms"]) << " ms (first token after "
       << number_or_none(timings["time_to_first_token_ms"]) << " ms)";
  lines.push_back(line.str());
  if (!decode_steps.empty()) {
    line.str("");
    line << "decode: " << decode_steps.size() << " token(s) on profile(s) "
         << profiles_text(decode_steps) << ", " << number_or_none(timings["decode_ms_per_token"])
         << " ms/token (" << number_or_none(timings["decode_tokens_per_s"]) << " tokens/s, " << mode
         << " mode)";
    lines.push_back(line.str());
  }
  lines.push_back("stop: " + result.stop + " after " + std::to_string(result.tokens.size()) +
                  " new token(s)");
  return lines;
}

}  // namespace trt_edge::runner
