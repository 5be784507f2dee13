"""The recipe's half of the `lower` stage: how ExecuTorch's CPU backends take a causal LM.

- `run_reinplace_pass=True`: the cache write (`index_put`) happens in the buffer
  itself; without it each call copies every layer's whole cache, functionally, and
  copies it back at the end — decode time then grows with `max_cache_len` even
  though nothing crosses the method boundary.
- `emit_mutable_buffer_names=True`: the `.pte` names the cache buffers
  (`k_cache_0`, …), so a runner can find them.
- XNNPACK only: the edge pass `xnnpack_pass.rewrite_for_xnnpack` before
  partitioning, and the edge IR verifier skipped (`_check_ir_validity=False`: about
  a fifth of the lowering time here; validation of the bundle still runs).

The emitter gives mutable buffers no initial contents: they live in the method's
planned memory, which `executorch::extension::Module` (and the Python runtime over
it) zero-fills. A runner that brings its own planned memory must zero it too — the
bundle says so (`llm.requires_zeroed_planned_memory`).
"""

from __future__ import annotations

from pathlib import Path

from trt_edge.manifest.huggingface import FUSED
from trt_edge.pipeline.errors import LoweringError
from trt_edge.pipeline.lower import LoweringRecipe


def refuse_fused_on(backend: str, attention: str, manifest: Path) -> None:
    """`attention: fused` on TensorRT (backend auto picked it on this host): its operator is
    ExecuTorch's CPU kernel, not a TensorRT layer. `validate` refuses an explicit
    `backend: tensorrt`; this is the build's own check once `auto` is decided."""

    if attention == FUSED and backend == "tensorrt":
        raise LoweringError(
            f"{manifest}: model.huggingface.attention is fused, which runs on ExecuTorch's CPU "
            "backends only, but this build lowers to TensorRT",
            hint="set attention: filled for a TensorRT build, or build.backend: xnnpack",
        )


def causal_lm_recipe(backend: str) -> LoweringRecipe:
    from executorch.exir import EdgeCompileConfig, ExecutorchBackendConfig

    backend_config = ExecutorchBackendConfig(
        run_reinplace_pass=True, emit_mutable_buffer_names=True
    )
    if backend != "xnnpack":
        return LoweringRecipe(backend_config=backend_config)
    from trt_edge.llm.xnnpack_pass import rewrite_for_xnnpack

    return LoweringRecipe(
        transform_passes=[rewrite_for_xnnpack],
        compile_config=EdgeCompileConfig(_check_ir_validity=False),
        backend_config=backend_config,
    )
