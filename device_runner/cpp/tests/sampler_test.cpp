// The sampler's rules (sampler.h), as a plain program: greedy is argmax; top-k 1 equals
// greedy at any temperature; a seed gives the same draws and another seed others; top-p keeps
// the smallest set of the most likely tokens reaching p; CTRL's repetition penalty.
#include <cstdio>
#include <cstdlib>
#include <set>
#include <vector>

#include "sampler.h"

using namespace trt_edge::runner;

namespace {

int failures = 0;

#define CHECK(cond)                                                   \
  do {                                                                \
    if (!(cond)) {                                                    \
      std::printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);     \
      ++failures;                                                     \
    }                                                                 \
  } while (0)

const std::vector<float> kRow = {0.5f, 2.0f, 1.9f, -1.0f, 1.0f, 1.8f};

std::vector<int64_t> draws(const SamplingParams& params, int n) {
  Sampler sampler(params);
  std::vector<int64_t> out;
  for (int i = 0; i < n; ++i) out.push_back(sampler.next(kRow, {}));
  return out;
}

void greedy_and_top_k_one() {
  SamplingParams greedy;
  CHECK(draws(greedy, 3) == std::vector<int64_t>(3, 1));
  SamplingParams top1;
  top1.temperature = 5.0;
  top1.top_k = 1;
  top1.seed = 99;
  CHECK(draws(top1, 20) == std::vector<int64_t>(20, 1));
}

void seeded_reproducibility() {
  SamplingParams p;
  p.temperature = 2.0;
  p.seed = 7;
  const auto a = draws(p, 64);
  CHECK(a == draws(p, 64));
  p.seed = 8;
  CHECK(a != draws(p, 64));
  std::set<int64_t> distinct(a.begin(), a.end());
  CHECK(distinct.size() > 2);  // a high temperature spreads the draws
}

void nucleus_keeps_the_smallest_set_reaching_p() {
  const std::vector<double> probs = {0.1, 0.4, 0.3, 0.2};
  CHECK(nucleus(probs, 0.4) == (std::vector<int64_t>{1}));
  CHECK(nucleus(probs, 0.5) == (std::vector<int64_t>{1, 2}));
  CHECK(nucleus(probs, 0.7) == (std::vector<int64_t>{1, 2}));
  CHECK(nucleus(probs, 0.71) == (std::vector<int64_t>{1, 2, 3}));
  CHECK(nucleus(probs, 1.0).size() == 4);
  // Ties go to the lowest id.
  CHECK(nucleus({0.25, 0.25, 0.25, 0.25}, 0.5) == (std::vector<int64_t>{0, 1}));
  // A small top_p at any temperature samples only the most likely token.
  SamplingParams p;
  p.temperature = 1.0;
  p.top_p = 0.01;
  p.seed = 3;
  CHECK(draws(p, 20) == std::vector<int64_t>(20, 1));
}

void repetition_penalty_rule() {
  std::vector<float> row = {2.0f, -2.0f, 1.0f};
  apply_repetition_penalty(row, {0, 1}, 2.0);
  CHECK(row[0] == 1.0f);   // positive: divided
  CHECK(row[1] == -4.0f);  // negative: multiplied
  CHECK(row[2] == 1.0f);   // not seen: untouched
  // Greedy with a penalty avoids the seen argmax.
  SamplingParams p;
  p.repetition_penalty = 1.5;
  Sampler sampler(p);
  CHECK(sampler.next(kRow, {1}) == 2);
}

void unit_interval_is_in_range() {
  std::mt19937_64 g(0);
  for (int i = 0; i < 1000; ++i) {
    const double u = unit_interval(g);
    CHECK(u >= 0.0 && u < 1.0);
  }
}

void a_mask_keeps_only_the_allowed_ids() {
  // ids 2 and 4 allowed (bits 2 and 4 of word 0): greedy and every seed pick one of them.
  const std::vector<uint32_t> allowed = {(1u << 2) | (1u << 4)};
  std::vector<float> row = kRow;
  apply_token_mask(row, allowed);
  CHECK(token_allowed(allowed, 2) && token_allowed(allowed, 4) && !token_allowed(allowed, 1));
  CHECK(!token_allowed(allowed, 40));  // past the words: clear
  CHECK(argmax(row) == 2);
  for (uint64_t seed = 0; seed < 50; ++seed) {
    SamplingParams params;
    params.temperature = 2.0;
    params.seed = seed;
    Sampler sampler(params);
    const int64_t id = sampler.next(row, {});
    CHECK(id == 2 || id == 4);
  }
}

}  // namespace

int main() {
  a_mask_keeps_only_the_allowed_ids();
  greedy_and_top_k_one();
  seeded_reproducibility();
  nucleus_keeps_the_smallest_set_reaching_p();
  repetition_penalty_rule();
  unit_interval_is_in_range();
  if (failures) return 1;
  std::printf("all sampler checks passed\n");
  return 0;
}
