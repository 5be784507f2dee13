#include "fused_attention.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <mutex>
#include <optional>
#include <vector>

#include <executorch/extension/kernel_util/make_boxed_from_unboxed_functor.h>
#include <executorch/runtime/core/exec_aten/exec_aten.h>
#include <executorch/runtime/core/exec_aten/util/tensor_util.h>
#include <executorch/runtime/kernel/kernel_runtime_context.h>
#include <executorch/runtime/kernel/operator_registry.h>
#include <executorch/runtime/kernel/thread_parallel_interface.h>
#include <executorch/runtime/platform/log.h>

// The helpers pass 32-byte vectors by value; all are inlined into one function per target, so
// the note that their ABI differs with and without AVX concerns no call that exists.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace trt_edge::runner {

namespace {

// Eight float lanes with GCC/Clang vector extensions: one source for every target. The
// compiler maps a vector to two SSE or NEON registers, or to one AVX register in the x86
// clone below; explicit vectors (and several partial sums) are what let it keep the dot
// products in registers without reassociating float adds, which it may not do on its own.
typedef float Lanes __attribute__((vector_size(32)));
typedef int32_t IntLanes __attribute__((vector_size(32)));
constexpr int64_t kLanes = 8;

// x86-64: the per-task kernel is compiled twice, for the baseline (SSE2) and for AVX2+FMA, and
// the second is taken when the CPU has both (checked once, by feature, so AMD and Intel alike:
// GCC's target_clones("arch=haswell") dispatches on the CPU model and ran the SSE2 code on an
// AVX2 EPYC). Elsewhere the one baseline build (aarch64's NEON has fused multiply-add already).
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define FUSED_ATTENTION_X86_AVX2 1
#endif
#define FUSED_ATTENTION_INLINE inline __attribute__((always_inline))

FUSED_ATTENTION_INLINE Lanes load(const float* p) {
  Lanes v;
  std::memcpy(&v, p, sizeof v);  // unaligned-safe; compiles to vector loads
  return v;
}

FUSED_ATTENTION_INLINE void store(float* p, Lanes v) { std::memcpy(p, &v, sizeof v); }

// One broadcast instruction: inside the AVX2 build GCC assembles a braced {x, x, ...} lane by
// lane (eight inserts per splat in the hot loops), a shuffle of lane 0 it does not. GCC before
// 12 has no __builtin_shufflevector and keeps the braces.
#if defined(__has_builtin)
#if __has_builtin(__builtin_shufflevector)
#define FUSED_ATTENTION_SHUFFLE 1
#endif
#endif
FUSED_ATTENTION_INLINE Lanes splat(float x) {
#ifdef FUSED_ATTENTION_SHUFFLE
  const Lanes first = {x};
  return __builtin_shufflevector(first, first, 0, 0, 0, 0, 0, 0, 0, 0);
#else
  return Lanes{x, x, x, x, x, x, x, x};
#endif
}

FUSED_ATTENTION_INLINE float lane_sum(Lanes v) {
  return ((v[0] + v[4]) + (v[1] + v[5])) + ((v[2] + v[6]) + (v[3] + v[7]));
}

FUSED_ATTENTION_INLINE float lane_max(Lanes v) {
  float m = v[0];
  for (int l = 1; l < kLanes; ++l) m = v[l] > m ? v[l] : m;
  return m;
}

// e^x for x <= 0 (scores minus their maximum), lane-wise: x = n ln2 + r with |r| <= ln2/2,
// e^r by a degree-6 polynomial (Taylor, relative error < 2e-7 on that interval), 2^n through the
// exponent bits. Below -87 the result is flushed to 0, as expf underflows there.
FUSED_ATTENTION_INLINE Lanes exp_nonpositive(Lanes x) {
  const Lanes lowest = splat(-87.0f);
  x = x < lowest ? lowest : x;
  const Lanes n = __builtin_convertvector(
      __builtin_convertvector(x * splat(1.44269504088896341f) - splat(0.5f), IntLanes), Lanes);
  // n = round-to-nearest-ish: truncation of (x log2e - 0.5) for x <= 0 rounds toward zero,
  // i.e. up, so n is within [x log2e - 0.5, x log2e + 0.5]: |r| <= ln2/2 holds.
  const Lanes r = (x - n * splat(0.693359375f)) + n * splat(2.12194440e-4f);
  Lanes p = splat(1.0f / 720);
  p = p * r + splat(1.0f / 120);
  p = p * r + splat(1.0f / 24);
  p = p * r + splat(1.0f / 6);
  p = p * r + splat(0.5f);
  p = p * r + splat(1.0f);
  p = p * r + splat(1.0f);
  const IntLanes bits = (__builtin_convertvector(n, IntLanes) + 127) << 23;
  Lanes scale;
  std::memcpy(&scale, &bits, sizeof scale);
  const IntLanes flushed = x <= lowest;  // all ones in a flushed lane
  IntLanes result_bits;
  const Lanes result = p * scale;
  std::memcpy(&result_bits, &result, sizeof result_bits);
  result_bits &= ~flushed;
  Lanes kept;
  std::memcpy(&kept, &result_bits, sizeof kept);
  return kept;
}

// Brings the cache row `ahead` keys on into the CPU's caches while this one is used: one head's
// row is dim floats in its own 4 KB page (kv_heads * dim apart), where the hardware
// prefetchers, which stop at page boundaries, do not reach.
constexpr int64_t kRowsAhead = 8;
FUSED_ATTENTION_INLINE void prefetch_row(const float* row, int64_t dim) {
  for (int64_t d = 0; d < dim; d += 16) __builtin_prefetch(row + d, 0, 3);
}

// The query rows one pass over a KV head's keys serves: up to kMaxRows (query heads sharing the
// KV head, at one or several positions), each seeing its own number of keys (causal: its
// position + 1). Each key and value row is loaded once for all of them, which is what makes a
// prefill chunk cheap: sixteen rows per load instead of the group's two. The plain loops below
// take up to kPlainRows of them at a time (their sums are per-row registers).
constexpr int kMaxRows = 16;
constexpr int kPlainRows = 8;
struct Rows {
  const float* query[kMaxRows];
  float* out[kMaxRows];
  int64_t n_keys[kMaxRows];
  int64_t n_max = 0;  // the largest n_keys: keys past a row's own get weight 0
};

// scores[r][j] = scale * q_r . k_j for j < n_max.
template <int R>
FUSED_ATTENTION_INLINE void score_rows(const Rows& rows, const float* key, int64_t key_stride,
                                       int64_t dim, float scale, float* scores) {
  const int64_t n = rows.n_max;
  const float* q[R];  // local copies the compiler keeps in registers
  for (int r = 0; r < R; ++r) q[r] = rows.query[r];
  for (int64_t j = 0; j < n; ++j) {
    const float* k = key + j * key_stride;
    if (j + kRowsAhead < n) prefetch_row(k + kRowsAhead * key_stride, dim);
    Lanes acc[R];
    for (int r = 0; r < R; ++r) acc[r] = splat(0.0f);
    int64_t d = 0;
    for (; d + kLanes <= dim; d += kLanes) {
      const Lanes kv = load(k + d);
      for (int r = 0; r < R; ++r) acc[r] += load(q[r] + d) * kv;
    }
    for (int r = 0; r < R; ++r) {
      float sum = lane_sum(acc[r]);
      for (int64_t t = d; t < dim; ++t) sum += q[r][t] * k[t];
      scores[r * n + j] = sum * scale;
    }
  }
}

// Each row of scores becomes its softmax numerators e^(s - max) over its own keys, and 0 past
// them; writes the reciprocal of each row's sum to inv[r].
FUSED_ATTENTION_INLINE void softmax_numerators(float* scores, const Rows& rows, int count,
                                               float* inv) {
  for (int r = 0; r < count; ++r) {
    const int64_t n_keys = rows.n_keys[r];
    float* s = scores + r * rows.n_max;
    float top = -std::numeric_limits<float>::infinity();
    int64_t j = 0;
    for (; j + kLanes <= n_keys; j += kLanes) top = std::max(top, lane_max(load(s + j)));
    for (; j < n_keys; ++j) top = std::max(top, s[j]);
    Lanes total_lanes = splat(0.0f);
    float total = 0.0f;
    for (j = 0; j + kLanes <= n_keys; j += kLanes) {
      const Lanes e = exp_nonpositive(load(s + j) - splat(top));
      store(s + j, e);
      total_lanes += e;
    }
    for (; j < n_keys; ++j) {
      s[j] = std::exp(s[j] - top);
      total += s[j];
    }
    std::fill(s + n_keys, s + rows.n_max, 0.0f);
    inv[r] = 1.0f / (total + lane_sum(total_lanes));
  }
}

// out_r = inv_r * sum_j p[r][j] v_j, key by key: each value row is read once, whole, and the R
// output rows accumulate in place (they stay in L1).
template <int R>
FUSED_ATTENTION_INLINE void weigh_values(const float* probs, const float* inv, const Rows& rows,
                                         const float* value, int64_t value_stride, int64_t dim) {
  const int64_t n = rows.n_max;
  float* out[R];  // local copies the compiler keeps in registers
  for (int r = 0; r < R; ++r) out[r] = rows.out[r];
  for (int r = 0; r < R; ++r) std::fill(out[r], out[r] + dim, 0.0f);
  const int64_t vector_end = dim - dim % kLanes;
  for (int64_t j = 0; j < n; ++j) {
    const float* v = value + j * value_stride;
    if (j + kRowsAhead < n) prefetch_row(v + kRowsAhead * value_stride, dim);
    float p[R];
    for (int r = 0; r < R; ++r) p[r] = probs[r * n + j];
    for (int64_t d = 0; d < vector_end; d += kLanes) {
      const Lanes vv = load(v + d);
      for (int r = 0; r < R; ++r) store(out[r] + d, load(out[r] + d) + splat(p[r]) * vv);
    }
    for (int64_t d = vector_end; d < dim; ++d) {  // a head size that is not a multiple of 8
      for (int r = 0; r < R; ++r) out[r][d] += p[r] * v[d];
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int64_t d = 0; d < dim; ++d) out[r][d] *= inv[r];
  }
}

// ---- Passes of 4 to 16 rows, head size a multiple of 8: register-blocked loops ------------
// With several rows per key the dot-product form above runs out of load ports (each row's query
// is reloaded per key) and the value pass out of store ports (every output row is read and
// written per key). These keep their sums in registers instead, 4 rows at a time; a decode
// pass of 1 to 3 rows keeps the loops above, which need no packing.

// Keys per block: the score pass transposes a block into `pack` (dim x kKeyBlock floats) so that
// one vector holds 8 keys' products; the value pass sweeps a block (16 rows of dim floats, L1-
// sized) once per 16-float column chunk.
constexpr int64_t kKeyBlock = 16;

// scores[r][jb + t] for the G rows at `query` and the block's kb keys, from the packed block.
template <int G>
FUSED_ATTENTION_INLINE void score_group(const float* const* query, const float* pack,
                                        int64_t dim, float scale, int64_t kb,
                                        float* const* row_scores) {
  Lanes lo[G], hi[G];
  for (int g = 0; g < G; ++g) lo[g] = hi[g] = splat(0.0f);
  for (int64_t d = 0; d < dim; ++d) {
    const Lanes keys_lo = load(pack + d * kKeyBlock);
    const Lanes keys_hi = load(pack + d * kKeyBlock + kLanes);
    for (int g = 0; g < G; ++g) {
      const Lanes q = splat(query[g][d]);
      lo[g] += q * keys_lo;
      hi[g] += q * keys_hi;
    }
  }
  for (int g = 0; g < G; ++g) {
    float block[kKeyBlock];
    store(block, lo[g] * splat(scale));
    store(block + kLanes, hi[g] * splat(scale));
    std::memcpy(row_scores[g], block, static_cast<size_t>(kb) * sizeof(float));  // not past kb
  }
}

// scores[r][j] = scale * q_r . k_j for the `count` rows and j < n_max, a block of kKeyBlock keys
// at a time.
FUSED_ATTENTION_INLINE void score_rows_blocked(const Rows& rows, int count, const float* key,
                                               int64_t key_stride, int64_t dim, float scale,
                                               float* scores, float* pack) {
  const int64_t n = rows.n_max;
  for (int64_t jb = 0; jb < n; jb += kKeyBlock) {
    const int64_t kb = std::min(kKeyBlock, n - jb);
    for (int64_t t = 0; t < kKeyBlock; ++t) {  // transpose; missing keys of a last block are 0
      float* column = pack + t;
      if (t < kb) {
        const float* k = key + (jb + t) * key_stride;
        if (jb + t + kKeyBlock < n) prefetch_row(k + kKeyBlock * key_stride, dim);
        for (int64_t d = 0; d < dim; ++d) column[d * kKeyBlock] = k[d];
      } else {
        for (int64_t d = 0; d < dim; ++d) column[d * kKeyBlock] = 0.0f;
      }
    }
    float* row_scores[kMaxRows];
    for (int r = 0; r < count; ++r) row_scores[r] = scores + r * n + jb;
    int r = 0;
    for (; r + 4 <= count; r += 4) {
      score_group<4>(rows.query + r, pack, dim, scale, kb, row_scores + r);
    }
    switch (count - r) {
      case 3: score_group<3>(rows.query + r, pack, dim, scale, kb, row_scores + r); break;
      case 2: score_group<2>(rows.query + r, pack, dim, scale, kb, row_scores + r); break;
      case 1: score_group<1>(rows.query + r, pack, dim, scale, kb, row_scores + r); break;
      default: break;
    }
  }
}

// out[g][c, c + 8 W) += sum over the block's kb keys of p[g][t] v_t[c, c + 8 W): G x W sums in
// registers for the whole block.
template <int G, int W>
FUSED_ATTENTION_INLINE void weigh_group(float* const* out, const float* const* probs,
                                        const float* value, int64_t value_stride, int64_t kb,
                                        int64_t c) {
  Lanes acc[G][W];
  for (int g = 0; g < G; ++g) {
    for (int w = 0; w < W; ++w) acc[g][w] = load(out[g] + c + w * kLanes);
  }
  for (int64_t t = 0; t < kb; ++t) {
    const float* v = value + t * value_stride + c;
    Lanes values[W];
    for (int w = 0; w < W; ++w) values[w] = load(v + w * kLanes);
    for (int g = 0; g < G; ++g) {
      const Lanes p = splat(probs[g][t]);
      for (int w = 0; w < W; ++w) acc[g][w] += p * values[w];
    }
  }
  for (int g = 0; g < G; ++g) {
    for (int w = 0; w < W; ++w) store(out[g] + c + w * kLanes, acc[g][w]);
  }
}

template <int G>
FUSED_ATTENTION_INLINE void weigh_block(float* const* out, const float* const* probs,
                                        const float* value, int64_t value_stride, int64_t kb,
                                        int64_t dim) {
  int64_t c = 0;
  for (; c + 2 * kLanes <= dim; c += 2 * kLanes) {
    weigh_group<G, 2>(out, probs, value, value_stride, kb, c);
  }
  if (c < dim) weigh_group<G, 1>(out, probs, value, value_stride, kb, c);  // dim % 16 == 8
}

// out_r = inv_r * sum_j p[r][j] v_j for the `count` rows, a block of kKeyBlock value rows at a
// time.
FUSED_ATTENTION_INLINE void weigh_values_blocked(const float* probs, const float* inv,
                                                 const Rows& rows, int count, const float* value,
                                                 int64_t value_stride, int64_t dim) {
  const int64_t n = rows.n_max;
  float* const* out = rows.out;
  for (int r = 0; r < count; ++r) std::fill(out[r], out[r] + dim, 0.0f);
  for (int64_t jb = 0; jb < n; jb += kKeyBlock) {
    const int64_t kb = std::min(kKeyBlock, n - jb);
    const float* block = value + jb * value_stride;
    for (int64_t t = 0; t < kb && jb + t + kKeyBlock < n; ++t) {
      prefetch_row(block + (t + kKeyBlock) * value_stride, dim);
    }
    const float* p[kMaxRows];
    for (int r = 0; r < count; ++r) p[r] = probs + r * n + jb;
    int r = 0;
    for (; r + 4 <= count; r += 4) weigh_block<4>(out + r, p + r, block, value_stride, kb, dim);
    switch (count - r) {
      case 3: weigh_block<3>(out + r, p + r, block, value_stride, kb, dim); break;
      case 2: weigh_block<2>(out + r, p + r, block, value_stride, kb, dim); break;
      case 1: weigh_block<1>(out + r, p + r, block, value_stride, kb, dim); break;
      default: break;
    }
  }
  for (int r = 0; r < count; ++r) {
    for (int64_t d = 0; d < dim; ++d) out[r][d] *= inv[r];
  }
}

// The plain loops, for R <= kPlainRows rows.
template <int R>
FUSED_ATTENTION_INLINE void attend_rows(const Rows& rows, const float* key, const float* value,
                                        int64_t stride, int64_t dim, float scale, float* scores) {
  float inv[R];
  score_rows<R>(rows, key, stride, dim, scale, scores);
  softmax_numerators(scores, rows, R, inv);
  weigh_values<R>(scores, inv, rows, value, stride, dim);
}

FUSED_ATTENTION_INLINE void attend_rows_of(int count, const Rows& rows, const float* key,
                                           const float* value, int64_t stride, int64_t dim,
                                           float scale, float* scores, float* pack) {
  if (count >= 4 && dim % kLanes == 0) {
    float inv[kMaxRows];
    score_rows_blocked(rows, count, key, stride, dim, scale, scores, pack);
    softmax_numerators(scores, rows, count, inv);
    weigh_values_blocked(scores, inv, rows, count, value, stride, dim);
    return;
  }
  for (int base = 0; base < count; base += kPlainRows) {  // in parts of up to kPlainRows rows
    const int part = std::min(kPlainRows, count - base);
    Rows some;
    for (int r = 0; r < part; ++r) {
      some.query[r] = rows.query[base + r];
      some.out[r] = rows.out[base + r];
      some.n_keys[r] = rows.n_keys[base + r];
      some.n_max = std::max(some.n_max, some.n_keys[r]);
    }
    switch (part) {
      case 8: attend_rows<8>(some, key, value, stride, dim, scale, scores); break;
      case 7: attend_rows<7>(some, key, value, stride, dim, scale, scores); break;
      case 6: attend_rows<6>(some, key, value, stride, dim, scale, scores); break;
      case 5: attend_rows<5>(some, key, value, stride, dim, scale, scores); break;
      case 4: attend_rows<4>(some, key, value, stride, dim, scale, scores); break;
      case 3: attend_rows<3>(some, key, value, stride, dim, scale, scores); break;
      case 2: attend_rows<2>(some, key, value, stride, dim, scale, scores); break;
      default: attend_rows<1>(some, key, value, stride, dim, scale, scores);
    }
  }
}

// The shape of one call, shared by its tasks.
struct Call {
  const float* query;
  const float* key;
  const float* value;
  float* out;
  int64_t seq, heads, kv_heads, dim, start_pos;
  bool causal;
  float scale;
};

// One task: query positions [first, last) against KV head g, every query head of that KV head,
// in passes of up to kMaxRows rows. `scores` holds kMaxRows * (start_pos + seq) floats, then
// kKeyBlock * dim for the packed key block.
FUSED_ATTENTION_INLINE void attend_task_body(const Call& c, int64_t first, int64_t last,
                                             int64_t g, float* scores) {
  const int64_t reps = c.heads / c.kv_heads, stride = c.kv_heads * c.dim;
  const float* k = c.key + g * c.dim;
  const float* v = c.value + g * c.dim;
  float* pack = scores + kMaxRows * (c.start_pos + c.seq);
  // Rows in order (position, query head), kMaxRows per pass.
  const int64_t total = (last - first) * reps;
  for (int64_t base = 0; base < total; base += kMaxRows) {
    const int count = static_cast<int>(std::min<int64_t>(kMaxRows, total - base));
    Rows rows;
    for (int n = 0; n < count; ++n) {
      const int64_t i = first + (base + n) / reps, r = (base + n) % reps;
      const int64_t row = (i * c.heads + g * reps + r) * c.dim;
      rows.query[n] = c.query + row;
      rows.out[n] = c.out + row;
      rows.n_keys[n] = c.causal ? c.start_pos + i + 1 : c.start_pos + c.seq;
      rows.n_max = std::max(rows.n_max, rows.n_keys[n]);
    }
    attend_rows_of(count, rows, k, v, stride, c.dim, c.scale, scores, pack);
  }
}

using AttendTask = void (*)(const Call&, int64_t, int64_t, int64_t, float*);

void attend_task_baseline(const Call& c, int64_t first, int64_t last, int64_t g, float* scores) {
  attend_task_body(c, first, last, g, scores);
}

#ifdef FUSED_ATTENTION_X86_AVX2
__attribute__((target("avx2,fma"))) void attend_task_avx2(const Call& c, int64_t first,
                                                          int64_t last, int64_t g,
                                                          float* scores) {
  attend_task_body(c, first, last, g, scores);
}
#endif

// The build of the per-task kernel for this CPU, chosen once.
AttendTask attend_task_for_this_cpu() {
#ifdef FUSED_ATTENTION_X86_AVX2
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return attend_task_avx2;
#endif
  return attend_task_baseline;
}

constexpr char kCustomSdpaOut[] = "llama::custom_sdpa.out";

using executorch::aten::ScalarType;
using executorch::aten::Tensor;
using executorch::runtime::Error;
using executorch::runtime::KernelRuntimeContext;

bool shape_ok(const Tensor& query, const Tensor& key, const Tensor& value, int64_t start_pos) {
  if (query.dim() != 4 || key.dim() != 4 || value.dim() != 4) return false;
  if (query.scalar_type() != ScalarType::Float || key.scalar_type() != ScalarType::Float ||
      value.scalar_type() != ScalarType::Float)
    return false;
  for (int d = 0; d < 4; ++d) {
    if (key.size(d) != value.size(d)) return false;
  }
  const int64_t heads = query.size(2), kv_heads = key.size(2);
  return query.size(0) == key.size(0) && query.size(3) == key.size(3) && kv_heads > 0 &&
         heads % kv_heads == 0 && start_pos >= 0 && start_pos + query.size(1) <= key.size(1);
}

// llama::custom_sdpa.out(Tensor query, Tensor key, Tensor value, SymInt start_pos,
//   Tensor? attn_mask=None, float drpout_p=0., bool is_causal=False, float? scale=None, *,
//   Tensor(a!) out) -> Tensor(a!)
Tensor& custom_sdpa_out(KernelRuntimeContext& context, const Tensor& query, const Tensor& key,
                        const Tensor& value, int64_t start_pos,
                        const std::optional<Tensor>& attn_mask, double dropout, bool is_causal,
                        std::optional<double> scale, Tensor& out) {
  if (attn_mask.has_value() || dropout != 0.0 || !shape_ok(query, key, value, start_pos)) {
    ET_LOG(Error,
           "llama::custom_sdpa.out: trt-edge-run takes float [batch, seq, heads, dim] queries over "
           "a [batch, slots, kv_heads, dim] cache, start_pos + seq <= slots, no mask, no dropout");
    context.fail(Error::InvalidArgument);
    return out;
  }
  if (executorch::runtime::resize_tensor(out, query.sizes()) != Error::Ok) {
    context.fail(Error::InvalidArgument);
    return out;
  }
  const int64_t batch = query.size(0), seq = query.size(1), heads = query.size(2);
  const int64_t slots = key.size(1), kv_heads = key.size(2), dim = query.size(3);
  const float factor =
      static_cast<float>(scale.has_value() ? *scale : 1.0 / std::sqrt(static_cast<double>(dim)));
  for (int64_t b = 0; b < batch; ++b) {
    fused_attention(query.const_data_ptr<float>() + b * seq * heads * dim,
                    key.const_data_ptr<float>() + b * slots * kv_heads * dim,
                    value.const_data_ptr<float>() + b * slots * kv_heads * dim,
                    out.mutable_data_ptr<float>() + b * seq * heads * dim, seq, heads, kv_heads,
                    dim, start_pos, is_causal, factor);
  }
  return out;
}

}  // namespace

void fused_attention(const float* query, const float* key, const float* value, float* out,
                     int64_t seq, int64_t heads, int64_t kv_heads, int64_t dim, int64_t start_pos,
                     bool causal, float scale) {
  static const AttendTask attend_task = attend_task_for_this_cpu();
  const Call call{query, key, value, out, seq, heads, kv_heads, dim, start_pos, causal, scale};
  // A task is a block of positions whose query rows fill one pass (kMaxRows / reps of them)
  // against one KV head: decode (seq 1) has kv_heads tasks. The pool hands each thread a
  // contiguous range of tasks, and a causal block's cost grows with its position, so blocks
  // are taken from both ends in turn (0, last, 1, last - 1, ...): every range mixes cheap and
  // dear ones.
  const int64_t reps = heads / kv_heads;
  const int64_t block = std::max<int64_t>(1, kMaxRows / reps);
  const int64_t blocks = (seq + block - 1) / block;
  executorch::extension::parallel_for(0, blocks * kv_heads, 1, [&](int64_t begin, int64_t end) {
    // Each pool thread keeps its buffer between calls (every entry is written before it is
    // read): one allocation per thread for the program's life, not one per call and layer.
    thread_local std::vector<float> scores;
    const auto needed = static_cast<size_t>(kMaxRows * (start_pos + seq) + kKeyBlock * dim);
    if (scores.size() < needed) scores.resize(needed);
    for (int64_t task = begin; task < end; ++task) {
      const int64_t turn = task / kv_heads, g = task % kv_heads;
      const int64_t b = turn % 2 == 0 ? turn / 2 : blocks - 1 - turn / 2;
      attend_task(call, b * block, std::min(seq, (b + 1) * block), g, scores.data());
    }
  });
}

void register_fused_attention_kernel() {
  static std::once_flag once;
  std::call_once(once, [] {
    const auto registered = executorch::runtime::register_kernel(
        executorch::extension::make_boxed_kernel(
            kCustomSdpaOut, EXECUTORCH_FN(custom_sdpa_out, kCustomSdpaOut)));
    if (registered != Error::Ok) {
      ET_LOG(Error, "trt-edge-run: could not register llama::custom_sdpa.out (error 0x%x)",
             static_cast<unsigned>(registered));
    }
  });
}

}  // namespace trt_edge::runner
