"""The `lower` stage: lowering backends behind one small interface.

A backend turns a torch.export program into `.pte` bytes. `xnnpack` and
`portable` are ExecuTorch's CPU paths (the embedded default where no GPU is
present); `tensorrt` builds one TensorRT engine through ONNX (`tensorrt.py`), in the
flavour the target runs (regular TensorRT or TensorRT for RTX, `trt_flavour`). `auto`
takes TensorRT when the target runs it and its flavour can build here, otherwise
XNNPACK, and says why.
"""

from __future__ import annotations

from dataclasses import dataclass

from trt_edge.pipeline.errors import BackendUnavailableError, BadInputError
from trt_edge.pipeline.lower import executorch_cpu
from trt_edge.pipeline.lower.backend import (
    Backend,
    EngineBuild,
    LoweredProgram,
    LoweringRecipe,
    Progress,
    require_fp32,
)
from trt_edge.pipeline.lower.tensorrt import TensorRTBackend
from trt_edge.pipeline.lower.trt_flavour import flavour
from trt_edge.targets.catalog import Target

__all__ = [
    "BACKEND_NAMES",
    "Backend",
    "BackendChoice",
    "EngineBuild",
    "LoweredProgram",
    "LoweringRecipe",
    "Progress",
    "choose_backend",
    "get_backend",
    "require_fp32",
]


BACKEND_NAMES = ("xnnpack", "portable", "tensorrt")


def get_backend(
    name: str, target: Target | None = None, progress: Progress | None = None
) -> Backend:
    """The backend `name`; for `tensorrt`, in the flavour `target` runs (regular TensorRT
    when no target is given) building for its compute capabilities, reporting the
    builder's phases to `progress`."""
    if name in ("xnnpack", "portable"):
        return executorch_cpu.xnnpack() if name == "xnnpack" else executorch_cpu.portable()
    if name == "tensorrt":
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
