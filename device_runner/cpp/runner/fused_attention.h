// Fused attention over a sequence-major KV cache: trt-edge-run's own kernel for the operator a
// bundle built with `attention: fused` calls, `llama::custom_sdpa.out` (docs/fused-attention.md).
//
// Why the runner carries it: ExecuTorch's C++ SDK (the wheel's lib/) ships the XNNPACK, portable,
// optimized and quantized kernels but not its LLM custom ops; the Python runtime takes them from
// the wheel's plugin, which needs libtorch. This is an implementation of the operator's contract,
// written here: keys and values read in place up to `start_pos + seq`, causal by position, grouped
// queries sharing a KV head, so a decode step costs the slots that are filled.
#pragma once

#include <cstdint>

namespace trt_edge::runner {

/// The plain math, on raw buffers (tested on its own against a direct softmax(QK^T)V).
/// query/out [seq, heads, dim]; key/value cache [slots, kv_heads, dim]; query i (absolute
/// position start_pos + i) attends to slots [0, start_pos + i] when causal, else to
/// [0, start_pos + seq). heads must be a multiple of kv_heads. Runs heads in parallel on
/// ExecuTorch's thread pool.
void fused_attention(const float* query, const float* key, const float* value, float* out,
                     int64_t seq, int64_t heads, int64_t kv_heads, int64_t dim, int64_t start_pos,
                     bool causal, float scale);

/// Registers the kernel `llama::custom_sdpa.out` with ExecuTorch's operator registry, once per
/// process (later calls do nothing). Call before loading a program.
void register_fused_attention_kernel();

}  // namespace trt_edge::runner
