"""The `lower` stage: lowering backends behind one small interface.

A backend turns a torch.export program into `.pte` bytes. `xnnpack` and
`portable` are ExecuTorch's CPU paths (the embedded default where no GPU is
present); `tensorrt` builds one TensorRT engine through ONNX (`tensorrt.py`), in the
flavour the target runs (regular TensorRT or TensorRT for RTX, `trt_flavour`). `auto`
takes TensorRT when the target runs it and its flavour can build here, otherwise
XNNPACK, and says why.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from trt_edge.manifest.resolved import ResolvedManifest
from trt_edge.pipeline.errors import BackendUnavailableError, BadInputError
from trt_edge.pipeline.lower.trt_flavour import flavour
from trt_edge.pipeline.plan import ExportPlan
from trt_edge.targets.catalog import Target

# (phase, step, steps) of a TensorRT engine build, for the progress display.
Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class EngineBuild:
    """How long the builder took for one engine (by its sha256). Kept beside the `.pte`,
    not in it, so a rebuild of the same engine gives the same program bytes."""

    engine_sha256: str
    build_seconds: float


@dataclass(frozen=True)
class Lowered:
    """A lowered program: the `.pte` bytes, any external tensor data (`.ptd`) files, and
    for TensorRT the builder's time per engine."""

    backend: str
    pte: bytes
    ptd: dict[str, bytes] = field(default_factory=dict)
    engines: tuple[EngineBuild, ...] = ()


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

    def packages(self) -> tuple[str, ...]:
        """Distributions whose versions the lowered program depends on (provenance)."""
        ...

    def identity(self) -> dict[str, Any]:
        """What, beyond its name, makes this backend's output differ (the lower stage's
        cache key): for TensorRT the flavour, its release and the compute capabilities."""
        ...

    def lower(
        self,
        program: Any,
        manifest: ResolvedManifest,
        plan: ExportPlan,
        recipe: LoweringRecipe | None = None,
    ) -> Lowered: ...


BACKEND_NAMES = ("xnnpack", "portable", "tensorrt")


def get_backend(
    name: str, target: Target | None = None, progress: Progress | None = None
) -> Backend:
    """The backend `name`; for `tensorrt`, in the flavour `target` runs (regular TensorRT
    when no target is given) building for its compute capabilities, reporting the
    builder's phases to `progress`."""
    if name in ("xnnpack", "portable"):
        from trt_edge.pipeline.lower import executorch_cpu

        return executorch_cpu.xnnpack() if name == "xnnpack" else executorch_cpu.portable()
    if name == "tensorrt":
        from trt_edge.pipeline.lower.tensorrt import TensorRTBackend

        which = flavour(
            target.tensorrt_flavour if target and target.tensorrt_flavour else "tensorrt"
        )
        sms = target.sm_list() if target is not None and which.sets_compute_capabilities else ()
        return TensorRTBackend(which, sms, progress)
    raise BadInputError(f"unknown backend {name!r}; choose one of auto, {', '.join(BACKEND_NAMES)}")


@dataclass(frozen=True)
class BackendChoice:
    backend: Backend
    reason: str  # why this backend, for the log and the summary


def choose_backend(
    requested: str, target: Target | None = None, progress: Progress | None = None
) -> BackendChoice:
    """Resolve `auto` for `target`, and refuse an explicitly requested backend that cannot
    run. `auto` takes TensorRT only for a target that runs it (a CPU target's bundle is
    XNNPACK, whatever this machine has)."""
    if requested == "auto":
        if target is not None and not target.requires_tensorrt:
            return BackendChoice(
                get_backend("xnnpack"), f"auto: target {target.id} runs on the CPU: xnnpack"
            )
        trt = get_backend("tensorrt", target, progress)
        missing = trt.unavailable_reason()
        if missing is None:
            return BackendChoice(trt, "auto: TensorRT can build for the target here")
        return BackendChoice(
            get_backend("xnnpack"), f"auto: using the CPU backend xnnpack because {missing}"
        )
    backend = get_backend(requested, target, progress)
    missing = backend.unavailable_reason()
    if missing is not None:
        raise BackendUnavailableError(
            f"backend {requested!r} cannot run here: {missing}",
            hint=(
                "build inside the target's TensorRT builder image (trt-edge build --container; "
                "x86-rtx builds TensorRT-RTX engines without a GPU), or choose --backend xnnpack"
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
