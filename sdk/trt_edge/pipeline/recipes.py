"""Recipes: what kind of model a manifest builds, as objects the stages consult.

A recipe answers, for its kind of model, the questions the stages would otherwise
answer with branches: what names the model in the export cache key and which
packages enter it, how to load and export it, which files the bundle gains (and
the `bundle.json` sections they make), what enters the validate key and what
validation runs (`Recipe`, the protocol `trt_edge.pipeline.chain` calls). A recipe also
carries its *steps* — transformations of the eager model before export, such as a
quantization scheme (`RecipeStep`) — so the next recipe or step plugs in here, not
inside the stages.

The plain `torch.nn.Module`/`.pt2` model (`PlainRecipe`) is built in. Other kinds live in
their own packages and register under the model source's kind in the entry-point group
`trt_edge.recipes` (sdk/pyproject.toml: `huggingface` is `trt_edge.llm.recipe`), as
optimum-executorch's registry maps a model kind to its export recipe: this package never
imports them, and one is imported only when a manifest of its kind is built.

Light at import (no torch): `trt-edge validate` never reaches it, but the build's
`load` stage does, before anything is known to be slow.
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from trt_edge_runner.bundle_format import DelegateInfo, LlmSection, TensorSpec

from trt_edge.manifest.locations import SourceLocations
from trt_edge.manifest.resolved import ResolvedManifest
from trt_edge.pipeline.errors import BadInputError
from trt_edge.pipeline.export import check_exported_domain, export_program
from trt_edge.pipeline.load_model import LoadedModel, SourceDigest, load_model, source_digest
from trt_edge.pipeline.lower import LoweringRecipe
from trt_edge.pipeline.plan import ExportPlan
from trt_edge.pipeline.quantize import quantize_step, tensorrt_precision_step
from trt_edge.pipeline.validate import ValidationReport, validate_bundle

ENTRY_POINTS = "trt_edge.recipes"


class RecipeStep(Protocol):
    """A transformation of the eager model before export (e.g. quantization)."""

    name: str

    def key(self) -> Any:
        """What of the step enters the export, lower and validate cache keys (JSON data)."""
        ...

    def apply(self, module: Any) -> Any:
        """The transformed module (may be `module`, changed in place)."""
        ...

    def record(self) -> dict[str, Any]:
        """What `bundle.json` records about the step."""
        ...


class Recipe(Protocol):
    """What the stages ask of a kind of model (`trt_edge.pipeline.chain`). `PlainRecipe` is
    the reference; a recipe that only changes some answers subclasses it."""

    name: str
    # Whether validation runs the model the export loaded (else it is let go of after
    # export: two copies of the weights must not be alive while the bundle runs).
    validates_loaded_model: bool

    def source_digest(self) -> SourceDigest: ...
    def packages(self) -> tuple[str, ...]: ...
    def model_key(self) -> Any: ...
    def steps_key(self) -> list[Any]: ...
    def validate_key(self, source_sha256: str, files: dict[str, bytes]) -> dict[str, Any]: ...
    def load(self) -> LoadedModel: ...
    def export(self, plan: ExportPlan, loaded: LoadedModel) -> Any: ...
    def lowering(self, backend: str) -> LoweringRecipe | None: ...
    def files(self, module: Any) -> dict[str, bytes]: ...
    def bundle_files(self, files: dict[str, bytes]) -> dict[str, bytes]: ...
    def llm_section(
        self, files: dict[str, bytes], outputs: tuple[TensorSpec, ...]
    ) -> LlmSection | None: ...
    def record(self) -> dict[str, Any]: ...
    def validate(
        self,
        staged: Path,
        plan: ExportPlan,
        backend: str,
        delegates: tuple[DelegateInfo, ...],
        loaded: Callable[[], LoadedModel],
    ) -> ValidationReport: ...


class PlainRecipe:
    """A `torch.nn.Module` from `model.entrypoint`, or a saved `.pt2` (`model.exported`):
    exported as declared, validated output by output against eager."""

    name = "plain"
    # Validation runs the very module the build loaded (it is kept until then).
    validates_loaded_model = True

    def __init__(self, manifest: ResolvedManifest, steps: tuple[RecipeStep, ...] = ()) -> None:
        self.manifest = manifest
        self.steps = steps

    # -- cache keys -------------------------------------------------------------------
    def source_digest(self) -> SourceDigest:
        """The model source's hash, without importing it (the `load` stage; cache hits)."""
        return source_digest(self.manifest)

    def packages(self) -> tuple[str, ...]:
        """Packages (beyond torch/executorch) whose versions enter every stage key."""
        return ()

    def model_key(self) -> Any:
        """What names the model source in the export key (never an absolute path)."""
        return self.manifest.entrypoint or str(self.manifest.exported)

    def steps_key(self) -> list[Any]:
        return [{"step": step.name, "key": step.key()} for step in self.steps]

    def validate_key(self, source_sha256: str, files: dict[str, bytes]) -> dict[str, Any]:
        """What the validate stage's output depends on beyond the `.pte` and the manifest."""
        label = self.quantization_label()
        budget = self.manifest.budget(label) if label else None
        return {"steps": self.steps_key(), "budget": budget and vars(budget)}

    # -- export -------------------------------------------------------------------------
    def load(self) -> LoadedModel:
        return load_model(self.manifest)

    def export(self, plan: ExportPlan, loaded: LoadedModel) -> Any:
        """The ExportedProgram of the loaded model, after the recipe's steps."""
        if loaded.exported is not None:
            if self.steps:
                raise BadInputError(
                    f"{self.manifest.where('build', 'quantize')}: a saved .pt2 cannot be "
                    "quantized by the build",
                    hint="quantize the model before torch.export, or use model.entrypoint",
                )
            check_exported_domain(self.manifest, plan, loaded.exported)
            return loaded.exported
        return export_program(self.manifest, plan, self.transformed(loaded.module))

    def lowering(self, backend: str) -> LoweringRecipe | None:
        """What this kind of model adds to `backend`'s lowering (None: its defaults)."""
        return None

    def transformed(self, module: Any) -> Any:
        for step in self.steps:
            module = step.apply(module)
        return module

    def files(self, module: Any) -> dict[str, bytes]:
        """Files made with the export (cached beside the program and the `.pte`)."""
        return {}

    # -- bundle ----------------------------------------------------------------------
    def bundle_files(self, files: dict[str, bytes]) -> dict[str, bytes]:
        """The files that go into the bundle directory."""
        return {}

    def llm_section(
        self, files: dict[str, bytes], outputs: tuple[TensorSpec, ...]
    ) -> LlmSection | None:
        return None

    def quantization_label(self) -> str | None:
        """The budget key of a quantized bundle (`validate.budgets`), None for fp32."""
        record = self.record().get("quantization")
        return str(record["scheme"]) if record else None

    def record(self) -> dict[str, Any]:
        """`bundle.json` fields the recipe's steps add (e.g. `quantization`)."""
        doc: dict[str, Any] = {}
        for step in self.steps:
            doc.update(step.record())
        return doc

    # -- validate --------------------------------------------------------------------
    def validate(
        self,
        staged: Path,
        plan: ExportPlan,
        backend: str,
        delegates: tuple[DelegateInfo, ...],
        loaded: Callable[[], LoadedModel],
    ) -> ValidationReport:
        label = self.quantization_label()
        if label is None:
            return validate_bundle(staged, self.manifest, plan, loaded().module, backend, delegates)
        # Quantized: against a fresh fp32 model (the steps changed the loaded one in place),
        # within the precision's budget instead of atol/rtol.
        budget = self.manifest.budget(label)
        manifest = dataclasses.replace(self.manifest, atol=budget.max_abs, rtol=0.0)
        return validate_bundle(staged, manifest, plan, self.load().module, backend, delegates)


# Steps made from the manifest, in the order they transform the model.
StepFactory = Callable[[ResolvedManifest, str], "RecipeStep | None"]
STEP_FACTORIES: list[StepFactory] = [quantize_step, tensorrt_precision_step]


def recipe_class(
    kind: str, locations: SourceLocations
) -> Callable[[ResolvedManifest, tuple[RecipeStep, ...]], Recipe]:
    """The recipe registered for `kind` (`module` is built in; the others are entry points
    of the group `trt_edge.recipes`, imported only now)."""
    if kind == "module":
        return PlainRecipe
    found = importlib.metadata.entry_points(group=ENTRY_POINTS, name=kind)
    if not found:
        raise BadInputError(
            f"{locations.where('model', kind)}: no recipe for a {kind} model is installed "
            f"(entry point {ENTRY_POINTS}:{kind})",
            hint="reinstall trt-edge (`pip install -e sdk`, or `make setup` in a checkout)",
        )
    factory: Callable[[ResolvedManifest, tuple[RecipeStep, ...]], Recipe] = next(iter(found)).load()
    return factory


def recipe_for(manifest: ResolvedManifest, backend: str) -> Recipe:
    """The recipe that builds `manifest` for `backend`, with the steps the manifest asks."""
    steps = tuple(
        step for factory in STEP_FACTORIES if (step := factory(manifest, backend)) is not None
    )
    # The kind of model source the manifest names: the key of its recipe.
    kind = "huggingface" if manifest.huggingface is not None else "module"
    return recipe_class(kind, manifest.locations)(manifest, steps)
