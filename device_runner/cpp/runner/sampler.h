// The sampler: the next token from one row of logits, in the engine (logits never cross
// the process boundary). Greedy (temperature 0, the default) is argmax with ties to the
// lowest id and the first NaN winning — numpy's argmax, so bit-identical to the greedy
// generate of every front end. Otherwise, in this order:
//   1. CTRL's repetition penalty (Keskar et al. 2019, as transformers applies it): the
//      logit of a token already seen (prompt or generated) is divided by the penalty when
//      positive, multiplied when negative; 1.0 = off (applied in greedy too);
//   2. division by the temperature;
//   3. top-k (0 = off): the k largest logits, ties to the lowest id;
//   4. softmax (in double), then top-p (nucleus, 1.0 = off): the smallest set of the most
//      likely tokens whose probabilities reach p;
//   5. a draw from what is left, renormalised, with std::mt19937_64 seeded by `seed` and
//      unit_interval below — both defined bit for bit by the C++ standard, unlike
//      std::uniform_real_distribution, so the same seed gives the same tokens on every
//      platform and standard library.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

namespace trt_edge::runner {

struct SamplingParams {
  double temperature = 0.0;         ///< 0 = greedy; else > 0
  int64_t top_k = 0;                ///< 0 = off
  double top_p = 1.0;               ///< (0, 1]; 1 = off
  double repetition_penalty = 1.0;  ///< > 0; 1 = off
  uint64_t seed = 0;

  bool greedy() const noexcept { return temperature <= 0.0 || top_k == 1; }
};

/// A double in [0, 1) from the generator's next 64 bits: the top 53 bits times 2^-53.
double unit_interval(std::mt19937_64& generator);

/// The index of the largest value; the lowest index among equals, the first NaN if any.
int64_t argmax(const std::vector<float>& row);

/// CTRL's rule on `row`, in place, once per distinct id of `seen` inside the row.
void apply_repetition_penalty(std::vector<float>& row, const std::vector<int64_t>& seen,
                              double penalty);

/// Constrained generation's rule, in place: every id of `row` whose bit is clear in `allowed`
/// (bit k%32 of word k/32, as the engine protocol's `mask` carries it; ids past the words
/// are clear) becomes -inf, so no sampling rule can pick it.
void apply_token_mask(std::vector<float>& row, const std::vector<uint32_t>& allowed);

/// Whether `allowed` sets the bit of `id`.
bool token_allowed(const std::vector<uint32_t>& allowed, int64_t id);

/// The smallest set of the most likely ids whose probabilities sum to at least `top_p`,
/// most likely first (ties to the lowest id); all ids when top_p >= 1.
std::vector<int64_t> nucleus(const std::vector<double>& probs, double top_p);

class Sampler {
 public:
  explicit Sampler(const SamplingParams& params);

  /// The next token from `row` (one position's logits over the vocabulary); `seen` are the
  /// ids the repetition penalty applies to.
  int64_t next(const std::vector<float>& row, const std::vector<int64_t>& seen);

 private:
  SamplingParams params_;
  std::mt19937_64 generator_;
};

}  // namespace trt_edge::runner
