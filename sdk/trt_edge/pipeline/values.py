"""The build's stages as values: each stage of `trt_edge.pipeline.chain` takes one of these
and returns the next, frozen (docs/design.md, "The build").

    Loaded ─▶ Planned ─▶ Exported ─▶ Lowered ─▶ Staged ─▶ Validated ─▶ (the bundle's path)

A value carries forward only what later stages read, so what is large is let go of as
soon as it is used: the exported program lives in `Exported` alone (gone once lowered),
the `.pte` bytes in `Lowered` alone (written, then gone before validation runs the staged
copy), and the eager model only while validation still runs it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trt_edge_runner.bundle_format import BundleManifest, DelegateInfo, TensorSpec

from trt_edge.manifest.resolved import ResolvedManifest
from trt_edge.pipeline.bundle import StagedBundle
from trt_edge.pipeline.environment import BuildEnvironment
from trt_edge.pipeline.load_model import LoadedModel, SourceDigest
from trt_edge.pipeline.lower import BackendChoice, LoweredProgram
from trt_edge.pipeline.plan import ExportPlan
from trt_edge.pipeline.recipes import Recipe
from trt_edge.pipeline.validate import ValidationReport
from trt_edge.targets.catalog import Target


@dataclass(frozen=True)
class Loaded:
    """The `load` stage: the manifest and everything decided before anything slow — the
    model's requirements (met), the target, the backend and the recipe, the source's hash
    and the package versions that enter every cache key."""

    manifest: ResolvedManifest
    requirements: dict[str, str]  # requirement line -> installed version
    environment: BuildEnvironment  # where the build runs: no stage computed elsewhere is reused
    target: Target
    fingerprint: dict[str, Any]  # bundle.json's `target`: what a device must match
    choice: BackendChoice
    recipe: Recipe
    digest: SourceDigest
    packages: dict[str, str | None]  # None: not installed
    source_date: int
    source_date_from: str
    bundle_name: str  # `<name>-<version>`: the bundle's directory under the output folder
    io: dict[str, Any]  # the inputs and profiles, as they enter the export and validate keys

    @property
    def backend(self) -> str:
        return self.choice.backend.name


@dataclass(frozen=True)
class Planned:
    """The `plan` stage: the export plan and the keys of the export and lower entries."""

    loaded: Loaded
    plan: ExportPlan
    export_key: str
    lower_key: str


@dataclass(frozen=True)
class Exported:
    """The `export` stage: the ExportedProgram and the files the recipe made with it — or,
    when the lower stage's entry is cached, nothing but that entry (`reused`): no export
    is needed. `model` is the eager model, kept only when validation runs it."""

    planned: Planned
    program: Any  # torch.export.ExportedProgram; None when `reused`
    recipe_files: dict[str, bytes]
    model: LoadedModel | None
    reused: dict[str, bytes] | None = None  # the lower stage's cache entry


@dataclass(frozen=True)
class Lowered:
    """The `lower` stage: the backend's program (`.pte`, `.ptd` files, engine build times)
    and its output specs."""

    planned: Planned
    program: LoweredProgram
    outputs: tuple[TensorSpec, ...]
    recipe_files: dict[str, bytes]
    model: LoadedModel | None


@dataclass(frozen=True)
class Staged:
    """The `bundle` stage: the bundle written to its staging directory, and what its
    bundle.json says (written there; sealed again at commit with the stages' provenance)."""

    planned: Planned
    bundle: StagedBundle
    pte_sha256: str
    outputs: tuple[TensorSpec, ...]
    delegates: tuple[DelegateInfo, ...]
    memory_warnings: tuple[str, ...]  # boards of the target that cannot hold the bundle
    document: BundleManifest  # bundle.json as written here; commit adds the stages' provenance
    recipe_files: dict[str, bytes]
    model: LoadedModel | None

    @property
    def path(self) -> Path:
        return self.bundle.path

    @property
    def loaded(self) -> Loaded:
        return self.planned.loaded


@dataclass(frozen=True)
class Validated:
    """The `validate` stage: the staged bundle and its report (committed only if ok)."""

    staged: Staged
    report: ValidationReport
