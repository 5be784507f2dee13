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

namespace trt_edge::runner {

namespace {

// Four lanes with GCC/Clang vector extensions: SSE on x86-64, NEON on aarch64, one source.
// Four independent partial sums also let the compiler keep the dot product in registers
// without reassociating float adds (which it may not do on its own).
typedef float Lanes __attribute__((vector_size(16)));

inline Lanes load(const float* p) {
  Lanes v;
  std::memcpy(&v, p, sizeof v);  // unaligned-safe; compiles to one vector load
  return v;
}

inline void store(float* p, Lanes v) { std::memcpy(p, &v, sizeof v); }

inline float dot(const float* a, const float* b, int64_t n) {
  Lanes acc0 = {0, 0, 0, 0}, acc1 = {0, 0, 0, 0};
  int64_t d = 0;
  for (; d + 8 <= n; d += 8) {
    acc0 += load(a + d) * load(b + d);
    acc1 += load(a + d + 4) * load(b + d + 4);
  }
  Lanes acc = acc0 + acc1;
  float sum = acc[0] + acc[1] + acc[2] + acc[3];
  for (; d < n; ++d) sum += a[d] * b[d];
  return sum;
}

// out += weight * row
inline void axpy(float* out, const float* row, float weight, int64_t n) {
  const Lanes w = {weight, weight, weight, weight};
  int64_t d = 0;
  for (; d + 4 <= n; d += 4) store(out + d, load(out + d) + w * load(row + d));
  for (; d < n; ++d) out[d] += weight * row[d];
}

// One query position i and one KV head g: the `reps` query heads that share g, together, so each
// key and value row is read once for all of them.
void attend_group(const float* query, const float* key, const float* value, float* out, int64_t i,
                  int64_t g, int64_t heads, int64_t kv_heads, int64_t dim, int64_t n_keys,
                  float scale, std::vector<float>& scores) {
  const int64_t reps = heads / kv_heads;
  scores.resize(static_cast<size_t>(reps * n_keys));
  const float* q = query + (i * heads + g * reps) * dim;
  for (int64_t j = 0; j < n_keys; ++j) {
    const float* k = key + (j * kv_heads + g) * dim;
    for (int64_t r = 0; r < reps; ++r) scores[r * n_keys + j] = dot(q + r * dim, k, dim) * scale;
  }
  for (int64_t r = 0; r < reps; ++r) {
    float* s = scores.data() + r * n_keys;
    const float top = *std::max_element(s, s + n_keys);
    float total = 0.0f;
    for (int64_t j = 0; j < n_keys; ++j) {
      s[j] = std::exp(s[j] - top);
      total += s[j];
    }
    const float inv = 1.0f / total;
    for (int64_t j = 0; j < n_keys; ++j) s[j] *= inv;
    float* o = out + (i * heads + g * reps + r) * dim;
    std::fill(o, o + dim, 0.0f);
  }
  for (int64_t j = 0; j < n_keys; ++j) {
    const float* v = value + (j * kv_heads + g) * dim;
    for (int64_t r = 0; r < reps; ++r) {
      axpy(out + (i * heads + g * reps + r) * dim, v, scores[r * n_keys + j], dim);
    }
  }
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
  // One task per (query position, KV head); the pool splits them. Decode (seq 1) has
  // kv_heads tasks, each reading its own head's keys and values once.
  executorch::extension::parallel_for(0, seq * kv_heads, 1, [&](int64_t begin, int64_t end) {
    std::vector<float> scores;
    for (int64_t task = begin; task < end; ++task) {
      const int64_t i = task / kv_heads, g = task % kv_heads;
      const int64_t n_keys = causal ? start_pos + i + 1 : start_pos + seq;
      attend_group(query, key, value, out, i, g, heads, kv_heads, dim, n_keys, scale, scores);
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
