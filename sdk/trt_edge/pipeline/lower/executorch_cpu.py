"""Shared ExecuTorch CPU lowering: edge dialect, optional partitioner, `.pte` bytes."""

from __future__ import annotations

from typing import Any

from trt_edge.pipeline.errors import LoweringError


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
