"""The `tensorrt` backend: one engine with the manifest's optimization profiles, as a delegate.

One path for both TensorRT flavours (`trt_flavour`: regular TensorRT on Jetson and `x86-trt`,
TensorRT for RTX on the `x86-rtx-*` targets), which differ only where their APIs do:

    ExportedProgram ──trt_onnx──▶ ONNX ──trt_engine (the flavour's OnnxParser + Builder)──▶
    engine + EngineRecord ──trt_delegate (ExecuTorch lowering, TR01 blob)──▶ .pte

The converter is PyTorch's ONNX exporter and TensorRT's own ONNX parser, never a
hand-written network; the profile list is applied once, to the one engine, so index *i*
means one regime everywhere. The flavour and the compute capabilities come from the target
(`catalog.json`): the code CI runs (TensorRT-RTX, building without a GPU) is the code users
run. Where the flavour cannot build here, `unavailable_reason` says what is missing and the
build stops with that one message; nothing here makes engine bytes of its own.
"""

from __future__ import annotations

from typing import Any

from trt_edge.manifest.resolved import ResolvedManifest
from trt_edge.pipeline.lower.backend import EngineBuild, LoweredProgram, LoweringRecipe, Progress
from trt_edge.pipeline.lower.trt_engine import build_engine, half_network
from trt_edge.pipeline.lower.trt_flavour import Flavour
from trt_edge.pipeline.lower.trt_onnx import to_onnx
from trt_edge.pipeline.plan import ExportPlan


class TensorRTBackend:
    """The TensorRT backend for one target: its flavour and the SMs it builds for."""

    name = "tensorrt"

    def __init__(
        self,
        flavour: Flavour,
        compute_capabilities: tuple[str, ...] = (),
        progress: Progress | None = None,
    ) -> None:
        self.flavour = flavour
        self.compute_capabilities = compute_capabilities
        self.progress = progress

    def unavailable_reason(self) -> str | None:
        return self.flavour.unavailable_reason()

    def packages(self) -> tuple[str, ...]:
        return (self.flavour.distribution, "onnx", "onnxscript")

    def identity(self) -> dict[str, Any]:
        return {
            "flavour": self.flavour.name,
            "version": self.flavour.version(),
            "compute_capabilities": list(self.compute_capabilities),
        }

    def lower(
        self,
        program: Any,
        manifest: ResolvedManifest,
        plan: ExportPlan,
        recipe: LoweringRecipe | None = None,
    ) -> LoweredProgram:
        """`recipe` (ExecuTorch edge passes for CPU kernels) does not apply: the engine is
        built from the program as exported."""
        from trt_edge.pipeline.lower import trt_delegate  # imports executorch

        onnx = to_onnx(program, manifest, plan, half=half_network(self.flavour, manifest))
        built = build_engine(onnx, manifest, self.flavour, self.compute_capabilities, self.progress)
        pte = trt_delegate.wrap(program, built.engine, built.record)
        return LoweredProgram(
            self.name,
            pte,
            engines=(EngineBuild(built.record.engine_sha256, built.build_seconds),),
        )
