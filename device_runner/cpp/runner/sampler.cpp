#include "sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <set>

namespace trt_edge::runner {
namespace {

/// Ids of `values` ordered from largest to smallest, ties to the lowest id.
template <typename T>
std::vector<int64_t> ranked(const std::vector<T>& values) {
  std::vector<int64_t> ids(values.size());
  std::iota(ids.begin(), ids.end(), int64_t{0});
  std::stable_sort(ids.begin(), ids.end(), [&](int64_t a, int64_t b) {
    return values[static_cast<size_t>(a)] > values[static_cast<size_t>(b)];
  });
  return ids;
}

}  // namespace

double unit_interval(std::mt19937_64& generator) {
  return static_cast<double>(generator() >> 11) * 0x1.0p-53;
}

int64_t argmax(const std::vector<float>& row) {
  if (row.empty()) return 0;
  int64_t best = 0;
  float best_value = row[0];
  if (std::isnan(best_value)) return 0;
  for (size_t k = 1; k < row.size(); ++k) {
    const float v = row[k];
    if (std::isnan(v)) return static_cast<int64_t>(k);
    if (v > best_value) {
      best = static_cast<int64_t>(k);
      best_value = v;
    }
  }
  return best;
}

void apply_repetition_penalty(std::vector<float>& row, const std::vector<int64_t>& seen,
                              double penalty) {
  if (penalty == 1.0) return;
  const std::set<int64_t> distinct(seen.begin(), seen.end());
  for (int64_t id : distinct) {
    if (id < 0 || id >= static_cast<int64_t>(row.size())) continue;
    float& v = row[static_cast<size_t>(id)];
    v = v > 0.0f ? static_cast<float>(v / penalty) : static_cast<float>(v * penalty);
  }
}

bool token_allowed(const std::vector<uint32_t>& allowed, int64_t id) {
  const auto word = static_cast<size_t>(id / 32);
  return id >= 0 && word < allowed.size() && ((allowed[word] >> (id % 32)) & 1u) != 0;
}

void apply_token_mask(std::vector<float>& row, const std::vector<uint32_t>& allowed) {
  for (size_t k = 0; k < row.size(); ++k) {
    if (!token_allowed(allowed, static_cast<int64_t>(k))) {
      row[k] = -std::numeric_limits<float>::infinity();
    }
  }
}

std::vector<int64_t> nucleus(const std::vector<double>& probs, double top_p) {
  const std::vector<int64_t> order = ranked(probs);
  if (top_p >= 1.0) return order;
  std::vector<int64_t> kept;
  double mass = 0.0;
  for (int64_t id : order) {
    kept.push_back(id);
    mass += probs[static_cast<size_t>(id)];
    if (mass >= top_p) break;
  }
  return kept;
}

Sampler::Sampler(const SamplingParams& params) : params_(params), generator_(params.seed) {}

int64_t Sampler::next(const std::vector<float>& row, const std::vector<int64_t>& seen) {
  std::vector<float> logits = row;
  apply_repetition_penalty(logits, seen, params_.repetition_penalty);
  // NaN has no rank (argmax returns the first one, as greedy would); greedy needs none.
  const bool nan = std::any_of(logits.begin(), logits.end(), [](float v) { return std::isnan(v); });
  if (params_.greedy() || logits.size() < 2 || nan) return argmax(logits);
  // The candidates, most likely first; top-k keeps the first k.
  std::vector<int64_t> ids = ranked(logits);
  if (params_.top_k > 0 && static_cast<size_t>(params_.top_k) < ids.size()) {
    ids.resize(static_cast<size_t>(params_.top_k));
  }
  // Softmax over the candidates at the temperature, the largest first (no overflow).
  std::vector<double> probs(ids.size());
  const double top = static_cast<double>(logits[static_cast<size_t>(ids[0])]);
  if (!std::isfinite(top)) return ids[0];  // +inf takes all the mass (-inf everywhere: any)
  double total = 0.0;
  for (size_t i = 0; i < ids.size(); ++i) {
    const double z = (static_cast<double>(logits[static_cast<size_t>(ids[i])]) - top) /
                     params_.temperature;
    probs[i] = std::exp(z);
    total += probs[i];
  }
  for (double& p : probs) p /= total;
  // Top-p on the candidates (already ranked: nucleus keeps a prefix of them).
  const std::vector<int64_t> kept = nucleus(probs, params_.top_p);
  double kept_mass = 0.0;
  for (int64_t k : kept) kept_mass += probs[static_cast<size_t>(k)];
  // The draw: walk the kept candidates in rank order until the cumulated mass passes u.
  const double u = unit_interval(generator_) * kept_mass;
  double cumulated = 0.0;
  for (int64_t k : kept) {
    cumulated += probs[static_cast<size_t>(k)];
    if (u < cumulated) return ids[static_cast<size_t>(k)];
  }
  return ids[static_cast<size_t>(kept.back())];
}

}  // namespace trt_edge::runner
