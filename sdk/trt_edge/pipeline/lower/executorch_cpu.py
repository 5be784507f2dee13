"""ExecuTorch's CPU backends: `xnnpack` (the default without TensorRT) and `portable`.

Both take the same road — edge dialect, an optional partitioner, `.pte` bytes —
and differ only in the partitioner: XNNPACK's delegates what it can to its
kernels; `portable` delegates nothing, which is slowest but runs every operator
(the way to tell whether an operator is what breaks XNNPACK lowering).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from typing import Any

from trt_edge.manifest.resolved import ResolvedManifest
from trt_edge.pipeline.errors import LoweringError
from trt_edge.pipeline.lower import Lowered, require_fp32
from trt_edge.pipeline.plan import ExportPlan


def lower_with(program: Any, partitioners: list[Any], backend: str) -> bytes:
    from executorch.exir import to_edge_transform_and_lower

    try:
        edge = to_edge_transform_and_lower(program, partitioner=partitioners)
        executorch_program = edge.to_executorch()
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

    def lower(self, program: Any, manifest: ResolvedManifest, plan: ExportPlan) -> Lowered:
        require_fp32(manifest, self.name)
        return Lowered(self.name, lower_with(program, self._partitioners(), self.name))


def xnnpack() -> ExecuTorchCpuBackend:
    return ExecuTorchCpuBackend("xnnpack", _xnnpack_partitioners)


def portable() -> ExecuTorchCpuBackend:
    return ExecuTorchCpuBackend("portable", _no_partitioners)
