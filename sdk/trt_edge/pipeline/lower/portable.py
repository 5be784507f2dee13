"""ExecuTorch's portable CPU kernels, no delegate: slowest, but runs every operator."""

from __future__ import annotations

import importlib.util
from typing import Any

from trt_edge.manifest.resolved import ResolvedManifest
from trt_edge.pipeline.lower import Lowered, require_fp32
from trt_edge.pipeline.lower.executorch_cpu import lower_with
from trt_edge.pipeline.plan import ExportPlan


class PortableBackend:
    name = "portable"

    def unavailable_reason(self) -> str | None:
        if importlib.util.find_spec("executorch") is None:
            return "the executorch package is not installed (pip install executorch==1.5.1)"
        return None

    def lower(self, program: Any, manifest: ResolvedManifest, plan: ExportPlan) -> Lowered:
        require_fp32(manifest, self.name)
        return Lowered(self.name, lower_with(program, [], self.name))
