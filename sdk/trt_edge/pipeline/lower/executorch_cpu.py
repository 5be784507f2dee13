"""ExecuTorch's CPU backends: `xnnpack` (the default without TensorRT) and `portable`.

Both take the same road — edge dialect, an optional partitioner, `.pte` bytes —
and differ only in the partitioner: XNNPACK's delegates what it can to its
kernels; `portable` delegates nothing, which is slowest but runs every operator
(the way to tell whether an operator is what breaks XNNPACK lowering). The pipeline
recipe may add passes and configs (a Hugging Face causal LM's: `trt_edge.llm.lowering`);
a plain model lowers with ExecuTorch's defaults.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from typing import Any

from trt_edge.manifest.resolved import ResolvedManifest
from trt_edge.pipeline.errors import LoweringError
from trt_edge.pipeline.lower import Lowered, LoweringRecipe, require_fp32
from trt_edge.pipeline.plan import ExportPlan


def lower_with(
    program: Any, partitioners: list[Any], backend: str, recipe: LoweringRecipe | None = None
) -> bytes:
    """`.pte` bytes of `program`; `recipe` adds passes and configs (the causal-LM recipe)."""
    from executorch.exir import to_edge_transform_and_lower

    edge_kwargs: dict[str, Any] = {}
    if recipe is not None and recipe.transform_passes:
        edge_kwargs["transform_passes"] = recipe.transform_passes
    if recipe is not None and recipe.compile_config is not None:
        edge_kwargs["compile_config"] = recipe.compile_config
    backend_config = recipe.backend_config if recipe is not None else None
    try:
        edge = to_edge_transform_and_lower(program, partitioner=partitioners, **edge_kwargs)
        executorch_program = (
            edge.to_executorch(config=backend_config)
            if backend_config is not None
            else edge.to_executorch()
        )
    except Exception as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        raise LoweringError(
            f"lowering with the {backend} backend failed: {type(exc).__name__}: {first}",
            hint="try --backend portable (no delegation) to see whether an operator is the cause",
        ) from exc
    return bytes(executorch_program.buffer)


def _xnnpack_partitioners() -> list[Any]:
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner

    return [XnnpackPartitioner()]


def _no_partitioners() -> list[Any]:
    return []


class ExecuTorchCpuBackend:
    """One CPU backend: its name and the partitioners it lowers with (made when lowering)."""

    def __init__(self, name: str, partitioners: Callable[[], list[Any]]) -> None:
        self.name = name
        self._partitioners = partitioners

    def unavailable_reason(self) -> str | None:
        if importlib.util.find_spec("executorch") is None:
            return "the executorch package is not installed (pip install executorch==1.5.1)"
        return None

    def lower(
        self,
        program: Any,
        manifest: ResolvedManifest,
        plan: ExportPlan,
        recipe: LoweringRecipe | None = None,
    ) -> Lowered:
        require_fp32(manifest, self.name)
        if manifest.quantize is not None:
            recipe = _with_quant_fusion(recipe)
        return Lowered(self.name, lower_with(program, self._partitioners(), self.name, recipe))


def _with_quant_fusion(recipe: LoweringRecipe | None) -> LoweringRecipe:
    """`recipe` plus ExecuTorch's quant fusion: torchao's quantized embeddings (dequantize +
    embedding) become the quantized embedding kernels; without it the `.pte` keeps
    `torchao::dequantize_affine`, which has no ExecuTorch kernel."""
    import dataclasses

    from executorch.exir import ExecutorchBackendConfig

    recipe = recipe or LoweringRecipe()
    config = recipe.backend_config or ExecutorchBackendConfig()
    fused = dataclasses.replace(config, do_quant_fusion_and_const_prop=True)
    return dataclasses.replace(recipe, backend_config=fused)


def xnnpack() -> ExecuTorchCpuBackend:
    return ExecuTorchCpuBackend("xnnpack", _xnnpack_partitioners)


def portable() -> ExecuTorchCpuBackend:
    return ExecuTorchCpuBackend("portable", _no_partitioners)
