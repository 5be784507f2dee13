// Unit tests for the pure parts of trt-edge-run --generate (runner/generate.h): how a
// prompt is split into calls (the shared vectors tests/vectors/prefill_chunks.json, which
// the Python prefill_chunks passes too), greedy argmax (ties to the lowest id, NaN first,
// the last row of a [1, seq, vocab] output), which calls count as the prompt's, and the
// refusals plan_generation gives from bundle.json alone. A plain program: prints each
// failed check and exits nonzero.
#include "cache_bounds.h"
#include "generate.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

using namespace trt_edge::runner;

namespace {

int failures = 0;

void check(bool ok, const std::string& what, int line) {
  if (!ok) {
    ++failures;
    std::printf("FAIL line %d: %s\n", line, what.c_str());
  }
}
#define CHECK(cond) check((cond), #cond, __LINE__)

Array floats(std::vector<int64_t> shape, const std::vector<float>& values) {
  Array a;
  a.dtype = "float32";
  a.shape = std::move(shape);
  a.data.resize(values.size() * sizeof(float));
  std::memcpy(a.data.data(), values.data(), a.data.size());
  return a;
}

int chunk_vectors(const char* path) {
  std::ifstream in(path);
  if (!in) {
    std::printf("cannot read %s\n", path);
    return 2;
  }
  const auto doc = nlohmann::json::parse(in);
  int passed = 0;
  for (const auto& c : doc.at("cases")) {
    const auto got = prefill_chunks(c.at("length").get<int64_t>(), c.at("low").get<int64_t>(),
                                    c.at("high").get<int64_t>());
    const auto want = c.at("expect").get<std::vector<int64_t>>();
    check(got == want, "prefill_chunks case " + c.at("name").get<std::string>(), __LINE__);
    passed += got == want;
  }
  std::printf("prefill_chunks: %d of %zu vectors passed\n", passed, doc.at("cases").size());
  return 0;
}

void argmax_rules() {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  CHECK(argmax_last_row(floats({1, 4}, {0.5f, 2.0f, -1.0f, 1.0f})) == 1);
  // Ties go to the lowest id, as numpy's argmax (and so the Python generate) does.
  CHECK(argmax_last_row(floats({1, 5}, {1.0f, 3.0f, 0.0f, 3.0f, 3.0f})) == 1);
  CHECK(argmax_last_row(floats({1, 3}, {7.0f, 7.0f, 7.0f})) == 0);
  // numpy's argmax returns the first NaN.
  CHECK(argmax_last_row(floats({1, 4}, {1.0f, nan, 9.0f, nan})) == 1);
  CHECK(argmax_last_row(floats({1, 2}, {nan, 9.0f})) == 0);
  // [1, seq, vocab] (the tiny-LLM contract): the last position's row only.
  CHECK(argmax_last_row(floats({1, 2, 3}, {9.0f, 0.0f, 0.0f, 0.0f, 0.0f, 1.0f})) == 2);
  CHECK(argmax_last_row(floats({1, 3}, {-5.0f, -4.0f, -6.0f})) == 1);
  bool refused = false;
  try {
    Array ints = floats({1, 2}, {0.0f, 1.0f});
    ints.dtype = "int32";
    argmax_last_row(ints);
  } catch (const RunnerError& e) {
    refused = e.kind() == ErrorKind::kExecutionFailed;
  }
  CHECK(refused);
}

void prompt_calls_and_timings() {
  GenerationResult r;
  r.prompt_ids = std::vector<int64_t>(30, 5);
  r.tokens = {1, 2, 3};
  r.steps = {{"prefill", 1, 0, 24, 2.0},
             {"prefill", 1, 24, 6, 1.0},
             {"decode", 0, 30, 1, 0.5},
             {"decode", 0, 31, 1, 0.25}};
  r.first_token_s = 0.004;
  r.total_s = 0.005;
  CHECK(r.prompt_calls() == 2);
  const auto t = r.timings();
  CHECK(t["prefill_ms"].get<double>() == 3.0);
  CHECK(t["time_to_first_token_ms"].get<double>() == 4.0);
  CHECK(t["decode_ms_per_token"].get<double>() == 0.375);
  CHECK(t["decode_tokens_per_s"].get<double>() == 2666.67);
  CHECK(t["tokens_per_s"].get<double>() == 600.0);
  // A one-token prompt below the prefill min ran as a decode call: still the prompt's.
  GenerationResult one;
  one.prompt_ids = {9};
  one.tokens = {4};
  one.steps = {{"decode", 0, 0, 1, 1.0}};
  CHECK(one.prompt_calls() == 1);
  CHECK(one.timings()["decode_ms_per_token"].is_null());
  CHECK(one.timings()["prefill_ms"].get<double>() == 1.0);
}

/// A causal-LM bundle as bundle.json would describe the test minis (no file behind it).
Bundle causal_lm() {
  Bundle b;
  b.dir = "mini";
  b.method = "forward";
  b.inputs = {TensorSpec{"input_ids", "int64", {int64_t{1}, std::string("seq")}, std::nullopt},
              TensorSpec{"cache_position", "int64", {std::string("seq")}, std::nullopt}};
  b.outputs = {TensorSpec{"output_0", "float32", {int64_t{1}, int64_t{512}}, std::nullopt}};
  b.profiles = {Profile{"decode", {{"seq", DimRange{1, 1, 1}}}},
                Profile{"prefill", {{"seq", DimRange{2, 8, 24}}}}};
  b.phases = {{"decode", 0}, {"prefill", 1}};
  LlmSection llm;
  llm.max_cache_len = 48;
  llm.vocab_size = 512;
  llm.tokens_input = "input_ids";
  llm.positions_input = "cache_position";
  llm.logits_output = "output_0";
  llm.positions_index = 1;
  llm.eos_token_ids = {1};
  b.llm = llm;
  return b;
}

std::string refusal(const Bundle& b, const std::vector<int64_t>& prompt, int64_t new_tokens,
                    ErrorKind* kind) {
  try {
    plan_generation(b, prompt, new_tokens);
  } catch (const RunnerError& e) {
    *kind = e.kind();
    return e.what();
  }
  *kind = ErrorKind::kInternal;
  return "";
}

bool has(const std::string& text, const std::string& part) {
  const bool found = text.find(part) != std::string::npos;
  if (!found) std::printf("  not in: %s\n  wanted: %s\n", text.c_str(), part.c_str());
  return found;
}

void plans() {
  const Bundle b = causal_lm();
  const GenerationPlan plan = plan_generation(b, {2, 3, 4}, 46);  // 3 + 46 - 1 == 48 slots
  CHECK(plan.contract == GenerationContract::kCausalLm);
  CHECK(plan.prefill_low == 2 && plan.prefill_high == 24);
  CHECK(plan.eos_token_ids == std::vector<int64_t>{1});
  ErrorKind kind;
  CHECK(has(refusal(b, {2, 3, 4}, 47, &kind),
            "the prompt (3 tokens) and --max-new-tokens 47 need 49 cache positions; the "
            "bundle's KV cache holds 48 (llm.max_cache_len)"));
  CHECK(kind == ErrorKind::kRequestRefused);
  CHECK(has(refusal(b, {2, 512}, 2, &kind), "--prompt-ids: 512 outside the vocabulary [0, 512)"));
  CHECK(kind == ErrorKind::kUsage);
  Bundle no_decode = b;
  no_decode.phases.erase("decode");
  // A phase the policy does not name runs under auto (as in Python): the plan still forms.
  const GenerationPlan without_decode = plan_generation(no_decode, {2, 3}, 2);
  CHECK(without_decode.contract == GenerationContract::kCausalLm);
  Bundle auto_prefill = b;
  auto_prefill.phases["prefill"] = std::nullopt;  // auto: the union of every profile's seq
  const GenerationPlan any = plan_generation(auto_prefill, {2, 3}, 2);
  CHECK(any.prefill_low == 1 && any.prefill_high == 24);
  Bundle wide_decode = b;
  wide_decode.phases["decode"] = 1;  // a decode profile that does not take one token
  CHECK(has(refusal(wide_decode, {2, 3}, 2, &kind), "takes seq [2, 24], not 1"));
  Bundle plain = b;
  plain.llm.reset();
  CHECK(has(refusal(plain, {2, 3}, 2, &kind),
            "no llm section and no generation section (the inputs are input_ids, "
            "cache_position): generate needs a causal LM"));
  CHECK(kind == ErrorKind::kRequestRefused);
}

/// `attention: filled` (llm version 2): the window rule, the plan, the refusals.
void windows() {
  Bundle b = causal_lm();
  b.inputs.push_back(TensorSpec{"cache_window", "int64", {std::string("window")}, std::nullopt});
  b.llm->max_cache_len = 160;
  b.llm->version = kLlmSectionWindowVersion;
  b.llm->window_input = "cache_window";
  b.llm->window_index = 2;
  b.llm->window_bucket = 64;
  // The values tests/llm/test_filled_cache.py asserts for the Python LlmSection.window_length.
  std::vector<int64_t> got;
  for (int64_t end : {1, 64, 65, 128, 129, 160}) got.push_back(b.llm->window_length(end));
  CHECK((got == std::vector<int64_t>{64, 64, 128, 128, 160, 160}));
  const GenerationPlan plan = plan_generation(b, {2, 3, 4}, 8);
  CHECK(plan.window_index && *plan.window_index == 2);
  ErrorKind kind;
  Bundle shared = b;
  shared.inputs[2].shape = {std::string("seq")};  // the window must not follow the call's seq
  CHECK(has(refusal(shared, {2, 3}, 2, &kind), "'cache_window' (llm.inputs.window) is not"));
  CHECK(kind == ErrorKind::kRequestRefused);
  Bundle two = causal_lm();  // a version-1 plan feeds two inputs; a third is refused
  two.inputs.push_back(b.inputs[2]);
  CHECK(has(refusal(two, {2, 3}, 2, &kind), "generate feeds only llm.inputs tokens"));
  Array positions;
  positions.dtype = "int64";
  positions.shape = {4};
  for (int64_t p : {8, 9, 10, 11}) {
    const auto* bytes = reinterpret_cast<const uint8_t*>(&p);
    positions.data.insert(positions.data.end(), bytes, bytes + sizeof(p));
  }
  Array window;
  window.dtype = "int64";
  window.shape = {12};
  window.data.assign(12 * sizeof(int64_t), 0);
  check_cache_window(*b.llm, positions, window);  // covers 0..11: accepted
  window.shape = {11};
  std::string message;
  try {
    check_cache_window(*b.llm, positions, window);
  } catch (const RunnerError& e) {
    message = e.what();
    kind = e.kind();
  }
  CHECK(has(message,
            "input 'cache_window' has length 11, but the call writes position 11: the attended "
            "window must cover positions [0, 12)"));
  CHECK(kind == ErrorKind::kRequestRefused);
}

/// `runtime.slots` (llm version 3): the plan reads the slots and the decode batch; a profile
/// that cannot take one row per prompt call is refused.
void slot_plans() {
  Bundle b = causal_lm();
  const std::string batch("batch"), seq("seq");
  b.inputs = {TensorSpec{"input_ids", "int64", {batch, seq}, std::nullopt},
              TensorSpec{"cache_position", "int64", {batch, seq}, std::nullopt},
              TensorSpec{"cache_slot", "int64", {batch}, std::nullopt}};
  b.outputs = {TensorSpec{"output_0", "float32", {batch, int64_t{512}}, std::nullopt}};
  b.profiles = {Profile{"decode", {{"batch", DimRange{1, 2, 2}}, {"seq", DimRange{1, 1, 1}}}},
                Profile{"prefill", {{"batch", DimRange{1, 1, 1}}, {"seq", DimRange{2, 8, 24}}}}};
  b.llm->version = kLlmSectionSlotsVersion;
  b.llm->slot_input = "cache_slot";
  b.llm->slot_index = 2;
  b.llm->slots = 4;
  const GenerationPlan plan = plan_generation(b, {2, 3, 4}, 8);
  CHECK(plan.slot_index && *plan.slot_index == 2);
  CHECK(plan.slots == 4 && plan.decode_batch_max == 2);  // 4 rows: two decode calls of 2
  CHECK(plan.prefill_low == 2 && plan.prefill_high == 24);
  ErrorKind kind;
  Bundle paired = b;
  paired.profiles[1].dims["batch"] = DimRange{2, 2, 2};
  CHECK(has(refusal(paired, {2, 3}, 2, &kind),
            "the prefill and decode profiles must take batch 1"));
  CHECK(kind == ErrorKind::kRequestRefused);
  Bundle flat = b;
  flat.inputs[2].shape = {seq};
  CHECK(has(refusal(flat, {2, 3}, 2, &kind), "'cache_slot' (llm.inputs.slot) is not an integer"));
}

/// The slot a request goes to on a slots program: the longest reusable prefix among the free
/// slots; a tie, no match or a cold start: the least recently used free slot.
void slot_choice() {
  const std::vector<int64_t> a{1, 2, 3, 4}, b{1, 2, 9}, empty;
  std::vector<SlotView> slots{{&a, 5, false}, {&b, 1, false}, {&empty, 3, false}};
  const std::vector<int64_t> prompt{1, 2, 3, 4, 7};
  SlotChoice c = choose_slot(slots, prompt, true);
  CHECK(c.slot == 0 && c.reused == 4);
  c = choose_slot(slots, {1, 2, 5}, true);  // slots 0 and 1 share 2 tokens: the older, 1
  CHECK(c.slot == 1 && c.reused == 2);
  c = choose_slot(slots, prompt, false);  // cold: the least recently used
  CHECK(c.slot == 1 && c.reused == 0);
  c = choose_slot(slots, {8, 8}, true);  // no match: the least recently used
  CHECK(c.slot == 1 && c.reused == 0);
  slots[0].busy = true;  // a busy slot is never chosen, whatever it holds
  c = choose_slot(slots, prompt, true);
  CHECK(c.slot == 1 && c.reused == 2);
  c = choose_slot(slots, {1, 2, 3, 4}, true);  // the last prompt token always runs
  CHECK(c.reused == 2);
}

/// A slots program's slot input: each row one of [0, slots), each slot at most once.
void slot_ids() {
  LlmSection llm;
  llm.slot_input = "cache_slot";
  llm.slots = 4;
  auto ids = [](const std::vector<int64_t>& values) {
    Array a;
    a.dtype = "int64";
    a.shape = {static_cast<int64_t>(values.size())};
    const auto* bytes = reinterpret_cast<const uint8_t*>(values.data());
    a.data.assign(bytes, bytes + values.size() * sizeof(int64_t));
    return a;
  };
  auto refusal = [&](const std::vector<int64_t>& values) {
    try {
      check_cache_slots(llm, ids(values));
    } catch (const RunnerError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(refusal({0, 3, 1}).empty());
  CHECK(has(refusal({4}), "input 'cache_slot' names slot 4: the program holds slots [0, 4)"));
  CHECK(has(refusal({-1}), "names slot -1"));
  CHECK(has(refusal({1, 2, 1}), "input 'cache_slot' names slot 1 twice"));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::printf("usage: %s tests/vectors/prefill_chunks.json\n", argv[0]);
    return 2;
  }
  if (const int code = chunk_vectors(argv[1])) return code;
  argmax_rules();
  prompt_calls_and_timings();
  plans();
  windows();
  slot_plans();
  slot_choice();
  slot_ids();
  if (failures) {
    std::printf("%d check(s) failed\n", failures);
    return 1;
  }
  std::printf("all generate checks passed\n");
  return 0;
}
