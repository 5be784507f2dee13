// Times the runner's fused attention kernel (runner/fused_attention.h) on one decode- or
// prefill-shaped call, on ExecuTorch's thread pool as in trt-edge-run. benchmarks/
// bench_fused_attention.py runs it beside ExecuTorch's own kernel at the same shapes and prints
// the ratio; this binary only measures and prints one JSON line.
//
// usage: trt_edge_fused_attention_bench SEQ HEADS KV_HEADS DIM SLOTS START ITERS LAYERS
// LAYERS caches are visited in turn, as a model's layers are, so that with several a call finds
// its cache out of the CPU's caches as in a real decode step.
#include "fused_attention.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 9) {
    std::fprintf(stderr, "usage: %s SEQ HEADS KV_HEADS DIM SLOTS START ITERS LAYERS\n", argv[0]);
    return 2;
  }
  long v[8];
  for (int i = 0; i < 8; ++i) v[i] = std::strtol(argv[i + 1], nullptr, 10);
  const int64_t seq = v[0], heads = v[1], kv_heads = v[2], dim = v[3], slots = v[4],
                start = v[5], iters = v[6], layers = v[7];
  if (seq < 1 || heads < 1 || kv_heads < 1 || heads % kv_heads || dim < 1 ||
      start < 0 || start + seq > slots || iters < 1 || layers < 1) {
    std::fprintf(stderr, "bad shape\n");
    return 2;
  }
  std::mt19937 gen(0);
  std::normal_distribution<float> normal;
  auto filled = [&](int64_t n) {
    std::vector<float> x(static_cast<size_t>(n));
    for (auto& e : x) e = normal(gen);
    return x;
  };
  const auto q = filled(seq * heads * dim);
  std::vector<std::vector<float>> k, val;
  for (int64_t l = 0; l < layers; ++l) {
    k.push_back(filled(slots * kv_heads * dim));
    val.push_back(filled(slots * kv_heads * dim));
  }
  std::vector<float> out(q.size());
  const float scale = 1.0f / std::sqrt(static_cast<float>(dim));
  std::vector<double> ms;
  for (int64_t it = 0; it < iters + 2; ++it) {  // two warm-up calls
    const size_t l = static_cast<size_t>(it % layers);
    const auto t0 = std::chrono::steady_clock::now();
    trt_edge::runner::fused_attention(q.data(), k[l].data(), val[l].data(), out.data(), seq,
                                      heads, kv_heads, dim, start, true, scale);
    const auto t1 = std::chrono::steady_clock::now();
    if (it >= 2) ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  double check = 0;
  for (float x : out) check += x;
  std::printf("{\"median_ms\": %.6f, \"min_ms\": %.6f, \"checksum\": %.6f}\n", ms[ms.size() / 2],
              ms.front(), check);
  return 0;
}
