"""`bundle_memory`: a bundle's run-time memory needs, read from its program and its files.

- weights: what the program carries besides its structure — the constant segment,
  named data (XNNPACK's shared weights), every delegate's processed blob (an XNNPACK
  graph, a TensorRT engine with its weights) and any external `.ptd` file;
- planned: the method's memory-planned buffers (`non_const_buffer_sizes`), which the
  runtime allocates when it loads the method — activations, and a causal LM's KV cache,
  which the emitter plans as named mutable buffers (`kv_cache_bytes` is that part) —
  plus each TensorRT engine's activation memory as its builder reported it (the largest
  of its profiles': an execution context holds one profile's at a time);
- the runner's own (`RUNNER_BYTES`, measured, see below).

Not counted (see docs/memory-budget.md): XNNPACK's packed copies of weights where it
repacks them, and what TensorRT allocates beyond its report (its CUDA context, the
runtime's JIT caches on TensorRT-RTX); the headroom is there for such things.
"""

from __future__ import annotations

from pathlib import Path

from trt_edge_runner.bundle_format import MODEL_PTE, DelegateInfo, LlmSection, MemorySection
from trt_edge_runner.memory_budget import MIB

from trt_edge.inspect.pte_reader import read_mutable_buffers, read_pte

# The C++ runner's own peak RSS around a bundle, measured on x86_64 (2026-12-04,
# executorch 1.5.1, XNNPACK): `/usr/bin/time -v trt-edge-run --bundle B --phases all --json`
# on the LLM tests' mini Qwen3 bundle (weights 0.56 MiB, planned 0.08 MiB) peaks at
# 13,328 kB; `--version` alone at 7,068 kB. Rounded up to 16 MiB. A CUDA/TensorRT
# runner on a Jetson adds its CUDA context, which could not be measured here: the
# headroom covers it.
RUNNER_BYTES = 16 * MIB


def weights_bytes(pte: Path, bundle_dir: Path) -> int:
    """Constants, named data and delegate blobs of the program, plus external `.ptd` files."""
    info = read_pte(pte)
    external = sum(p.stat().st_size for p in sorted(bundle_dir.glob("*.ptd")))
    blobs = sum(d.blob_size for d in info.delegates)
    return info.constant_bytes + info.named_data_bytes + blobs + external


def engine_activation_bytes(delegates: tuple[DelegateInfo, ...]) -> int:
    """The TensorRT engines' activation memory: per engine its largest profile's."""
    return sum(max(d.engine.activation_bytes, default=0) for d in delegates if d.engine)


def bundle_memory(
    bundle_dir: Path,
    llm: LlmSection | None,
    method: str = "forward",
    delegates: tuple[DelegateInfo, ...] = (),
) -> MemorySection:
    """The `memory` section of the bundle staged at `bundle_dir` (its `model.pte` loaded
    with `method`, its `delegates` as the build recorded them): reads the program's tables
    only, never its weights."""
    pte = bundle_dir / MODEL_PTE
    planned = read_pte(pte).method(method).planned_bytes + engine_activation_bytes(delegates)
    kv_cache = 0
    if llm is not None:
        names = set(llm.cache_buffers)
        kv_cache = sum(
            b.nbytes or 0
            for b in read_mutable_buffers(pte)
            if b.method == method and b.name in names
        )
    weights = weights_bytes(pte, bundle_dir)
    return MemorySection(
        weights_bytes=weights,
        planned_bytes=planned,
        kv_cache_bytes=kv_cache,
        runner_bytes=RUNNER_BYTES,
        total_bytes=weights + planned + RUNNER_BYTES,
    )
