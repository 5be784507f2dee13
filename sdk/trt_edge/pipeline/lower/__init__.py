"""The `lower` stage: lowering backends behind one small interface.

A backend turns a torch.export program into `.pte` bytes. `xnnpack` and
`portable` are ExecuTorch's CPU paths (the embedded default where no GPU is
present); `tensorrt` goes through torch_tensorrt. `auto` takes TensorRT when it
can run here and otherwise XNNPACK, and says why.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from trt_edge.manifest.resolved import ResolvedManifest
from trt_edge.pipeline.errors import BackendUnavailableError, BadInputError
from trt_edge.pipeline.plan import ExportPlan


@dataclass(frozen=True)
class Lowered:
    """A lowered program: the `.pte` bytes and any external tensor data (`.ptd`) files."""

    backend: str
    pte: bytes
    ptd: dict[str, bytes] = field(default_factory=dict)


@dataclass(frozen=True)
class LoweringRecipe:
    """What a model kind adds to ExecuTorch's CPU lowering beyond the partitioners: edge
    passes and the configs of `to_edge_transform_and_lower` / `to_executorch`. Given by
    the pipeline recipe (`Recipe.lowering`); TensorRT takes none."""

    transform_passes: list[Any] = field(default_factory=list)
    compile_config: Any = None  # executorch.exir.EdgeCompileConfig, or None for the default
    backend_config: Any = None  # executorch.exir.ExecutorchBackendConfig, or None


class Backend(Protocol):
    name: str

    def unavailable_reason(self) -> str | None:
        """None when the backend can run here, else one sentence saying what is missing."""
        ...

    def lower(
        self,
        program: Any,
        manifest: ResolvedManifest,
        plan: ExportPlan,
        recipe: LoweringRecipe | None = None,
    ) -> Lowered: ...


BACKEND_NAMES = ("xnnpack", "portable", "tensorrt")


def get_backend(name: str) -> Backend:
    if name in ("xnnpack", "portable"):
        from trt_edge.pipeline.lower import executorch_cpu

        return executorch_cpu.xnnpack() if name == "xnnpack" else executorch_cpu.portable()
    if name == "tensorrt":
        from trt_edge.pipeline.lower.tensorrt import TensorRTBackend

        return TensorRTBackend()
    raise BadInputError(f"unknown backend {name!r}; choose one of auto, {', '.join(BACKEND_NAMES)}")


@dataclass(frozen=True)
class BackendChoice:
    backend: Backend
    reason: str  # why this backend, for the log and the summary


def choose_backend(requested: str) -> BackendChoice:
    """Resolve `auto`, and refuse an explicitly requested backend that cannot run."""
    if requested == "auto":
        trt = get_backend("tensorrt")
        missing = trt.unavailable_reason()
        if missing is None:
            return BackendChoice(trt, "auto: TensorRT and a GPU are available")
        return BackendChoice(
            get_backend("xnnpack"), f"auto: using the CPU backend xnnpack because {missing}"
        )
    backend = get_backend(requested)
    missing = backend.unavailable_reason()
    if missing is not None:
        raise BackendUnavailableError(
            f"backend {requested!r} cannot run here: {missing}",
            hint=(
                "build inside a TensorRT builder image (trt-edge build --container "
                "--target x86-ada, or a Jetson target), or choose --backend xnnpack"
                if requested == "tensorrt"
                else None
            ),
        )
    return BackendChoice(backend, f"requested: {requested}")


def require_fp32(manifest: ResolvedManifest, backend: str) -> None:
    """The CPU backends build the model as exported (fp32); other precisions need TensorRT."""
    if manifest.precision != "fp32":
        raise BadInputError(
            f"{manifest.where('build', 'precision')}: build.precision: {manifest.precision} "
            f"is only supported by the tensorrt backend; {backend} builds fp32",
            hint="set build.precision: fp32, or build with --backend tensorrt on a GPU target",
        )
