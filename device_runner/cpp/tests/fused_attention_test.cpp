// The runner's fused attention kernel (runner/fused_attention.h) against the definition,
// softmax(scale * q k^T) v over the visible slots, computed in double: grouped queries (1 to 6
// query heads per KV head; the kernel's passes of up to 16 rows, several positions at once, each
// row with its own visible keys; the register-blocked loops of passes of 4 or more rows and the
// plain ones of fewer), causal and not, a call starting
// mid-cache (the kept prefix, decode), a head size with a tail past the vector width, slots
// past the visible ones holding NaN that must not be read, and scores spread so far that most
// softmax weights underflow. Runs on ExecuTorch's thread pool like in the runner. A plain
// program: prints each failed check and exits nonzero.
#include "fused_attention.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

using trt_edge::runner::fused_attention;

namespace {

int failures = 0;

struct Case {
  int64_t seq, heads, kv_heads, dim, slots, start;
  bool causal;
  float gain = 1.0f;  // query scale: large gains push scores below expf's underflow
};

// out[i, h, :] by the definition, in double.
std::vector<double> reference(const std::vector<float>& q, const std::vector<float>& k,
                              const std::vector<float>& v, const Case& c, float scale) {
  std::vector<double> out(static_cast<size_t>(c.seq * c.heads * c.dim), 0.0);
  const int64_t reps = c.heads / c.kv_heads;
  for (int64_t i = 0; i < c.seq; ++i) {
    const int64_t n = c.causal ? c.start + i + 1 : c.start + c.seq;
    for (int64_t h = 0; h < c.heads; ++h) {
      const int64_t g = h / reps;
      std::vector<double> s(static_cast<size_t>(n));
      double top = -INFINITY;
      for (int64_t j = 0; j < n; ++j) {
        double dot = 0;
        for (int64_t d = 0; d < c.dim; ++d) {
          dot += double(q[(i * c.heads + h) * c.dim + d]) * k[(j * c.kv_heads + g) * c.dim + d];
        }
        s[j] = dot * scale;
        top = std::max(top, s[j]);
      }
      double total = 0;
      for (auto& x : s) total += (x = std::exp(x - top));
      for (int64_t j = 0; j < n; ++j) {
        for (int64_t d = 0; d < c.dim; ++d) {
          out[(i * c.heads + h) * c.dim + d] +=
              s[j] / total * v[(j * c.kv_heads + g) * c.dim + d];
        }
      }
    }
  }
  return out;
}

void run(const Case& c) {
  std::mt19937 rng(static_cast<unsigned>(c.seq * 131 + c.heads * 17 + c.start));
  std::normal_distribution<float> normal(0.0f, 1.0f);
  auto fill = [&](size_t n) {
    std::vector<float> x(n);
    for (auto& e : x) e = normal(rng);
    return x;
  };
  auto q = fill(static_cast<size_t>(c.seq * c.heads * c.dim));
  for (auto& e : q) e *= c.gain;
  auto k = fill(static_cast<size_t>(c.slots * c.kv_heads * c.dim));
  auto v = fill(static_cast<size_t>(c.slots * c.kv_heads * c.dim));
  // Slots no query may see hold NaN: reading one would poison the result.
  for (int64_t j = c.start + c.seq; j < c.slots; ++j) {
    for (int64_t e = 0; e < c.kv_heads * c.dim; ++e) {
      k[j * c.kv_heads * c.dim + e] = v[j * c.kv_heads * c.dim + e] = NAN;
    }
  }
  const float scale = 1.0f / std::sqrt(static_cast<float>(c.dim));
  std::vector<float> got(q.size(), -1.0f);
  fused_attention(q.data(), k.data(), v.data(), got.data(), c.seq, c.heads, c.kv_heads, c.dim,
                  c.start, c.causal, scale);
  const auto want = reference(q, k, v, c, scale);
  double worst = 0;
  for (size_t e = 0; e < got.size(); ++e) {
    const double diff = std::fabs(got[e] - want[e]);
    worst = std::isnan(got[e]) ? INFINITY : std::max(worst, diff);
  }
  // Float scores carry a rounding error proportional to their size (the query gain), and the
  // AVX2 build's fused multiply-adds round differently from the baseline's: the bound grows
  // with the gain. Reading a wrong slot costs ~0.1 (or NaN), far above it.
  if (!(worst < 1e-5 * c.gain)) {
    ++failures;
    std::printf("FAIL seq %lld heads %lld/%lld dim %lld start %lld causal %d: max |diff| %g\n",
                static_cast<long long>(c.seq), static_cast<long long>(c.heads),
                static_cast<long long>(c.kv_heads), static_cast<long long>(c.dim),
                static_cast<long long>(c.start), c.causal ? 1 : 0, worst);
  }
}

}  // namespace

int main() {
  const Case cases[] = {
      {1, 16, 8, 128, 64, 40, true},   // decode, two query heads per KV head (Qwen3's shape)
      {1, 4, 1, 64, 32, 0, true},      // the first position: one slot visible
      {7, 4, 4, 16, 32, 0, true},      // a prompt from slot 0, one query head per KV head
      {5, 8, 2, 20, 48, 17, true},     // after a kept prefix; dim 20: a vector tail, plain loops
                                       // in parts of 8 of a 16-row pass
      {3, 6, 3, 12, 16, 9, false},     // not causal: every query sees [0, start + seq)
      {24, 12, 2, 128, 160, 24, true},  // a full prefill chunk, six query heads per KV head
      {13, 16, 8, 128, 64, 20, true},  // Qwen3's heads: passes of 8 positions, the last short
      {9, 8, 2, 72, 64, 11, true},     // prefill passes, dim 72: a last 8-float column chunk
      {6, 8, 4, 256, 40, 3, true},     // Gemma's head size 256, a key block cut short
      {2, 8, 8, 64, 80, 60, true, 40.0f}  // peaked: most weights underflow to exactly 0
  };
  for (const auto& c : cases) run(c);
  if (failures == 0) std::printf("fused attention: %zu cases ok\n", std::size(cases));
  return failures == 0 ? 0 : 1;
}
