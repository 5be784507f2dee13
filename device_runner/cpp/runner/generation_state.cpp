#include "generation_state.h"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "sampler.h"
#include "stage.h"

namespace trt_edge::runner {
namespace {

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

/// A phase the runtime policy does not name runs under auto (as the Python generate does).
Request request_for(const ProfiledModule& module, const char* phase) {
  return module.bundle().phases.count(phase) ? module.request_for_phase(phase)
                                             : Request::automatic();
}

}  // namespace

GenerationState::GenerationState(ProfiledModule& module, GenerationPlan plan)
    : module_(module),
      plan_(std::move(plan)),
      prefill_(request_for(module, kPrefillPhase)),
      decode_(request_for(module, kDecodePhase)),
      inputs_(module.bundle().inputs.size()) {
  reset();
}

void GenerationState::reset() {
  const Bundle& b = module_.bundle();
  for (size_t index : plan_.cache_inputs) inputs_[index] = zeros(b, b.inputs[index]);
  cached_.clear();
}

Array GenerationState::call(const char* phase, const std::vector<int64_t>& ids, int64_t start,
                            GenerationResult& stats) {
  using clock = std::chrono::steady_clock;
  const Bundle& b = module_.bundle();
  const bool causal = plan_.contract == GenerationContract::kCausalLm;
  const auto n = static_cast<int64_t>(ids.size());
  inputs_[plan_.tokens_index] = integers(b.inputs[plan_.tokens_index].dtype, {1, n}, ids);
  const std::string& positions_dtype = b.inputs[plan_.positions_index].dtype;
  if (plan_.slot_index) {
    // A slots program (llm version 3) alone: one row, in slot 0.
    std::vector<int64_t> positions(ids.size());
    for (int64_t k = 0; k < n; ++k) positions[static_cast<size_t>(k)] = start + k;
    inputs_[plan_.positions_index] = integers(positions_dtype, {1, n}, positions);
    inputs_[*plan_.slot_index] = integers(b.inputs[*plan_.slot_index].dtype, {1}, {0});
  } else if (causal) {
    std::vector<int64_t> positions(ids.size());
    for (int64_t k = 0; k < n; ++k) positions[static_cast<size_t>(k)] = start + k;
    inputs_[plan_.positions_index] = integers(positions_dtype, {n}, positions);
    if (plan_.window_index) {
      // `attention: filled`: the slots written so far rounded up to the bucket; only the
      // length is read (trt_edge.llm.generation feeds the same).
      const int64_t window = b.llm->window_length(start + n);
      std::vector<int64_t> slots(static_cast<size_t>(window));
      for (int64_t k = 0; k < window; ++k) slots[static_cast<size_t>(k)] = k;
      const std::string& window_dtype = b.inputs[*plan_.window_index].dtype;
      inputs_[*plan_.window_index] = integers(window_dtype, {window}, slots);
    }
  } else {
    inputs_[plan_.positions_index] = integers(positions_dtype, {1}, {start});
  }
  enter_stage(std::string("generating: ") + phase + " at position " + std::to_string(start));
  // From here until the call succeeds the cache's contents are unknown.
  cached_.resize(static_cast<size_t>(std::min<int64_t>(start, static_cast<int64_t>(cached_.size()))));
  const bool prefill = std::strcmp(phase, kPrefillPhase) == 0;
  const auto t0 = clock::now();
  RunResult run = guarded(prefill ? prefill_ : decode_, [&] { return module_.execute(inputs_); });
  const double ms = std::chrono::duration<double, std::milli>(clock::now() - t0).count();
  stats.steps.push_back(GenerationStep{phase, run.profile, start, n, round_ms(ms)});
  size_t needed = plan_.logits_index + 1;
  for (size_t index : plan_.cache_outputs) needed = std::max(needed, index + 1);
  if (run.outputs.size() < needed) {
    throw RunnerError(ErrorKind::kExecutionFailed,
                      b.dir + "/model.pte: method '" + b.method + "' returned " +
                          std::to_string(run.outputs.size()) + " tensor outputs, generate needs " +
                          std::to_string(needed) + " (bundle.json io.outputs)");
  }
  for (size_t k = 0; k < plan_.cache_inputs.size(); ++k) {
    inputs_[plan_.cache_inputs[k]] = std::move(run.outputs[plan_.cache_outputs[k]]);
  }
  if (static_cast<int64_t>(cached_.size()) == start) {
    cached_.insert(cached_.end(), ids.begin(), ids.end());
  }
  return std::move(run.outputs[plan_.logits_index]);
}

GenerationState::RowsCall GenerationState::call_rows(const char* phase,
                                                     const std::vector<Row>& rows) {
  using clock = std::chrono::steady_clock;
  const Bundle& b = module_.bundle();
  const auto batch = static_cast<int64_t>(rows.size());
  const auto seq = static_cast<int64_t>(rows.front().ids.size());
  std::vector<int64_t> ids, positions, slots;
  for (const Row& row : rows) {
    ids.insert(ids.end(), row.ids.begin(), row.ids.end());
    for (int64_t k = 0; k < seq; ++k) positions.push_back(row.start + k);
    slots.push_back(row.slot);
  }
  inputs_[plan_.tokens_index] = integers(b.inputs[plan_.tokens_index].dtype, {batch, seq}, ids);
  inputs_[plan_.positions_index] =
      integers(b.inputs[plan_.positions_index].dtype, {batch, seq}, positions);
  inputs_[*plan_.slot_index] = integers(b.inputs[*plan_.slot_index].dtype, {batch}, slots);
  enter_stage(std::string("generating: ") + phase + " of " + std::to_string(batch) + " rows");
  const bool prefill = std::strcmp(phase, kPrefillPhase) == 0;
  const auto t0 = clock::now();
  RunResult run = guarded(prefill ? prefill_ : decode_, [&] { return module_.execute(inputs_); });
  RowsCall out;
  out.ms = std::chrono::duration<double, std::milli>(clock::now() - t0).count();
  out.profile = run.profile;
  if (run.outputs.size() <= plan_.logits_index) {
    throw RunnerError(ErrorKind::kExecutionFailed,
                      b.dir + "/model.pte: method '" + b.method + "' returned " +
                          std::to_string(run.outputs.size()) + " tensor outputs, generate needs " +
                          std::to_string(plan_.logits_index + 1) + " (bundle.json io.outputs)");
  }
  out.logits = std::move(run.outputs[plan_.logits_index]);
  if (out.logits.dtype != "float32" || out.logits.shape.empty() ||
      out.logits.numel() != batch * plan_.vocab_size) {
    throw RunnerError(ErrorKind::kExecutionFailed,
                      "the logits output of a " + std::to_string(batch) + "-row call holds " +
                          std::to_string(out.logits.numel()) + " values; generate reads [" +
                          std::to_string(batch) + ", " + std::to_string(plan_.vocab_size) + "]");
  }
  return out;
}

std::vector<float> logits_row(const Array& logits, int64_t k) {
  const int64_t row = logits.shape.back();
  std::vector<float> out(static_cast<size_t>(row));
  std::memcpy(out.data(), logits.data.data() + static_cast<size_t>(k * row) * sizeof(float),
              out.size() * sizeof(float));
  return out;
}

std::vector<float> last_row(const Array& logits) {
  if (logits.dtype != "float32" || logits.shape.empty() || logits.shape.back() < 1) {
    throw RunnerError(ErrorKind::kExecutionFailed,
                      "the logits output is " + logits.dtype + " shaped with " +
                          std::to_string(logits.shape.size()) +
                          " dims; generate reads float32 logits with a vocabulary dimension");
  }
  const int64_t row = logits.shape.back();
  const int64_t first = logits.numel() - row;
  std::vector<float> out(static_cast<size_t>(row));
  std::memcpy(out.data(), logits.data.data() + static_cast<size_t>(first) * sizeof(float),
              out.size() * sizeof(float));
  return out;
}

int64_t argmax_last_row(const Array& logits) { return argmax(last_row(logits)); }

}  // namespace trt_edge::runner
