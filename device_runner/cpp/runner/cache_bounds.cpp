#include "cache_bounds.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace trt_edge::runner {
namespace {

std::vector<int64_t> values_of(const Array& a) {
  std::vector<int64_t> values(static_cast<size_t>(a.numel()));
  for (size_t k = 0; k < values.size(); ++k) {
    if (a.dtype == "int64") {
      std::memcpy(&values[k], a.data.data() + k * sizeof(int64_t), sizeof(int64_t));
    } else {
      int32_t v = 0;
      std::memcpy(&v, a.data.data() + k * sizeof(int32_t), sizeof(int32_t));
      values[k] = v;
    }
  }
  return values;
}

}  // namespace

void check_cache_positions(const LlmSection& llm, const Array& positions) {
  // bundle.json's reader admits only int64/int32 positions; the dtype of what was passed
  // is checked against it before this runs.
  if (positions.dtype != "int64" && positions.dtype != "int32") return;
  const std::vector<int64_t> values = values_of(positions);
  if (values.empty()) return;
  const auto [low, high] = std::minmax_element(values.begin(), values.end());
  const int64_t cache_len = llm.max_cache_len;
  if (*low >= 0 && *high < cache_len) return;
  const int64_t bad = *low < 0 ? *low : *high;
  const std::string len = std::to_string(cache_len);
  throw RunnerError(ErrorKind::kRequestRefused,
                    "input '" + llm.positions_input + "' holds position " + std::to_string(bad) +
                        " (start " + std::to_string(values.front()) + ", seq " +
                        std::to_string(values.size()) + "): the KV cache has positions [0, " + len +
                        ") (bundle.json llm.max_cache_len " + len +
                        "); a call needs start >= 0 and start + seq <= " + len +
                        ": start a new sequence at position 0, or rebuild with a larger "
                        "model.huggingface.max_cache_len")
      .with_input(llm.positions_input);
}

void check_cache_window(const LlmSection& llm, const Array& positions, const Array& window) {
  if (!llm.window_input) return;
  if (positions.dtype != "int64" && positions.dtype != "int32") return;
  const std::vector<int64_t> values = values_of(positions);
  if (values.empty()) return;
  const int64_t high = *std::max_element(values.begin(), values.end());
  const int64_t length = window.shape.empty() ? 0 : window.shape.front();
  if (length > high) return;
  throw RunnerError(ErrorKind::kRequestRefused,
                    "input '" + *llm.window_input + "' has length " + std::to_string(length) +
                        ", but the call writes position " + std::to_string(high) +
                        ": the attended window must cover positions [0, " +
                        std::to_string(high + 1) +
                        "); feed llm.window_length(start + seq) slots (bundle.json "
                        "llm.inputs.window)")
      .with_input(*llm.window_input);
}

void check_cache_slots(const LlmSection& llm, const Array& slots) {
  if (!llm.slot_input || (slots.dtype != "int64" && slots.dtype != "int32")) return;
  const std::vector<int64_t> values = values_of(slots);
  const std::string name = "input '" + *llm.slot_input + "'";
  for (int64_t v : values) {
    if (v < 0 || v >= llm.slots) {
      throw RunnerError(ErrorKind::kRequestRefused,
                        name + " names slot " + std::to_string(v) +
                            ": the program holds slots [0, " + std::to_string(llm.slots) +
                            ") (bundle.json llm.slots " + std::to_string(llm.slots) +
                            "); name one of them")
          .with_input(*llm.slot_input);
    }
  }
  for (size_t i = 0; i < values.size(); ++i) {
    for (size_t j = i + 1; j < values.size(); ++j) {
      if (values[i] == values[j]) {
        throw RunnerError(ErrorKind::kRequestRefused,
                          name + " names slot " + std::to_string(values[i]) +
                              " twice: each row of a call is its own conversation, in its own slot")
            .with_input(*llm.slot_input);
      }
    }
  }
}

}  // namespace trt_edge::runner
