"""ExecuTorch's XNNPACK CPU backend: the default on machines without TensorRT."""

from __future__ import annotations

import importlib.util
from typing import Any

from trt_edge.manifest.resolved import ResolvedManifest
from trt_edge.pipeline.lower import Lowered, require_fp32
from trt_edge.pipeline.lower.executorch_cpu import lower_with
from trt_edge.pipeline.plan import ExportPlan


class XnnpackBackend:
    name = "xnnpack"

    def unavailable_reason(self) -> str | None:
        if importlib.util.find_spec("executorch") is None:
            return "the executorch package is not installed (pip install executorch==1.5.1)"
        return None

    def lower(self, program: Any, manifest: ResolvedManifest, plan: ExportPlan) -> Lowered:
        from executorch.backends.xnnpack.partition.xnnpack_partitioner import (
            XnnpackPartitioner,
        )

        require_fp32(manifest, self.name)
        return Lowered(self.name, lower_with(program, [XnnpackPartitioner()], self.name))
