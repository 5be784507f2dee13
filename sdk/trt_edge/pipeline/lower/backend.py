"""What a lowering backend is (`Backend`) and what it gives and takes: its program
(`LoweredProgram`), a recipe's additions (`LoweringRecipe`), TensorRT's build times and
progress. Apart from the registry (`trt_edge.pipeline.lower`) so that the backends import
these without importing the module that picks them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from trt_edge.manifest.resolved import ResolvedManifest
from trt_edge.pipeline.errors import BadInputError
from trt_edge.pipeline.plan import ExportPlan

# (phase, step, steps) of a TensorRT engine build, for the progress display.
Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class EngineBuild:
    """How long the builder took for one engine (by its sha256). Kept beside the `.pte`,
    not in it, so a rebuild of the same engine gives the same program bytes."""

    engine_sha256: str
    build_seconds: float


@dataclass(frozen=True)
class LoweredProgram:
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
    ) -> LoweredProgram: ...


def require_fp32(manifest: ResolvedManifest, backend: str) -> None:
    """The CPU backends build the model as exported (fp32); other precisions need TensorRT."""
    if manifest.precision != "fp32":
        raise BadInputError(
            f"{manifest.where('build', 'precision')}: build.precision: {manifest.precision} "
            f"is only supported by the tensorrt backend; {backend} builds fp32",
            hint="set build.precision: fp32, or build with --backend tensorrt on a GPU target",
        )
