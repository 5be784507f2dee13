"""Recipes: what kind of model a manifest builds, as objects the stages consult.

A recipe answers, for its kind of model, the questions the stages would otherwise
answer with branches: what names the model in the export cache key and which
packages enter it, how to load and export it, which files the bundle gains (and
the `bundle.json` sections they make), what enters the validate key and what
validation runs. `recipe_for(manifest)` picks the first registered recipe that
claims the manifest; the plain `torch.nn.Module`/`.pt2` model is the default
(as ExecuTorch's export recipes and optimum-executorch's registry map a model kind
to its export steps). A recipe also carries its *steps* — transformations of the
eager model before export, such as a quantization scheme (`RecipeStep`) — so the
next recipe or step plugs in here, not inside `trt_edge.pipeline.run`.

Light at import (no torch): `trt-edge validate` never reaches it, but the build's
`load` stage does, before anything is known to be slow.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from trt_edge.manifest.resolved import ResolvedManifest

if TYPE_CHECKING:
    from trt_edge_runner.bundle_format import DelegateInfo, LlmSection, TensorSpec

    from trt_edge.pipeline.load_model import LoadedModel, SourceDigest
    from trt_edge.pipeline.lower import LoweringRecipe
    from trt_edge.pipeline.plan import ExportPlan
    from trt_edge.pipeline.validate import ValidationReport


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


def code_digest(root: Path) -> str:
    """Hash of the Python sources under `root` (a recipe's own code enters its keys)."""
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()


class PlainRecipe:
    """A `torch.nn.Module` from `model.entrypoint`, or a saved `.pt2` (`model.exported`):
    exported as declared, validated output by output against eager."""

    name = "plain"
    # Validation runs the very module the build loaded (it is kept until then).
    validates_loaded_model = True

    def __init__(self, manifest: ResolvedManifest, steps: tuple[RecipeStep, ...] = ()) -> None:
        self.manifest = manifest
        self.steps = steps

    @staticmethod
    def claims(manifest: ResolvedManifest) -> bool:
        return True

    # -- cache keys -------------------------------------------------------------------
    def source_digest(self) -> SourceDigest:
        """The model source's hash, without importing it (the `load` stage; cache hits)."""
        from trt_edge.pipeline.load_model import source_digest

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
        from trt_edge.pipeline.load_model import load_model

        return load_model(self.manifest)

    def export(self, plan: ExportPlan, loaded: LoadedModel) -> Any:
        """The ExportedProgram of the loaded model, after the recipe's steps."""
        from trt_edge.pipeline.export import check_exported_domain, export_program

        if loaded.exported is not None:
            if self.steps:
                from trt_edge.pipeline.errors import BadInputError

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
        import dataclasses

        from trt_edge.pipeline.validate import validate_bundle

        label = self.quantization_label()
        if label is None:
            return validate_bundle(staged, self.manifest, plan, loaded().module, backend, delegates)
        # Quantized: against a fresh fp32 model (the steps changed the loaded one in place),
        # within the precision's budget instead of atol/rtol.
        budget = self.manifest.budget(label)
        manifest = dataclasses.replace(self.manifest, atol=budget.max_abs, rtol=0.0)
        return validate_bundle(staged, manifest, plan, self.load().module, backend, delegates)


class CausalLmRecipe(PlainRecipe):
    """A Hugging Face causal LM (`model.huggingface`): a static-KV-cache wrapper exported
    over `seq` (`trt_edge.llm`), the tokenizer and the `llm` section in the bundle, and
    validation against the folder run by transformers (parity, state, generation)."""

    name = "huggingface-causal-lm"
    validates_loaded_model = False  # the reference is the folder, loaded by transformers
    PACKAGES = ("transformers", "tokenizers", "safetensors")

    @staticmethod
    def claims(manifest: ResolvedManifest) -> bool:
        return manifest.huggingface is not None

    def packages(self) -> tuple[str, ...]:
        return self.PACKAGES

    def source_digest(self) -> SourceDigest:
        from trt_edge.llm.loading import folder_digest

        return folder_digest(self.manifest)

    def code(self) -> str:
        """Hash of `trt_edge.llm` (the wrapper, rewrites, passes, validation)."""
        return code_digest(Path(__file__).resolve().parent.parent / "llm")

    def model_key(self) -> Any:
        source = self.manifest.huggingface
        assert source is not None
        return {
            "huggingface": source.architecture,
            "max_cache_len": source.max_cache_len,
            # `all` and `fused` export the same inputs: only this tells their programs apart.
            "attention": source.attention,
            "recipe": self.code(),
        }

    def validate_key(self, source_sha256: str, files: dict[str, bytes]) -> dict[str, Any]:
        # The eager reference is the folder itself, run by transformers with the
        # recipe's checks; the tokenizer file is part of what is validated.
        from trt_edge.pipeline.bundle import package_versions

        return {
            **super().validate_key(source_sha256, files),
            "source": source_sha256,
            "recipe": self.code(),
            "recipe_files": {n: hashlib.sha256(d).hexdigest() for n, d in sorted(files.items())},
            "packages": package_versions(self.PACKAGES),
        }

    def load(self) -> LoadedModel:
        from trt_edge.llm.loading import load_for_export
        from trt_edge.pipeline.load_model import LoadedModel

        return LoadedModel(module=load_for_export(self.manifest), exported=None)

    def export(self, plan: ExportPlan, loaded: LoadedModel) -> Any:
        from trt_edge.llm.export import export_causal_lm

        return export_causal_lm(self.manifest, plan, self.transformed(loaded.module))

    def lowering(self, backend: str) -> LoweringRecipe | None:
        from trt_edge.llm.lowering import causal_lm_recipe, refuse_fused_on

        source = self.manifest.huggingface
        assert source is not None
        refuse_fused_on(backend, source.attention, self.manifest.source_path)
        return causal_lm_recipe(backend)

    def files(self, module: Any) -> dict[str, bytes]:
        from trt_edge.llm.section import recipe_files

        return recipe_files(self.manifest, module)

    def bundle_files(self, files: dict[str, bytes]) -> dict[str, bytes]:
        from trt_edge.llm.section import bundle_files

        return bundle_files(files)

    def llm_section(
        self, files: dict[str, bytes], outputs: tuple[TensorSpec, ...]
    ) -> LlmSection | None:
        from trt_edge.llm.section import llm_section

        return llm_section(files, "forward", outputs)

    def validate(
        self,
        staged: Path,
        plan: ExportPlan,
        backend: str,
        delegates: tuple[DelegateInfo, ...],
        loaded: Callable[[], LoadedModel],
    ) -> ValidationReport:
        from trt_edge.llm.validation import validate_causal_lm

        return validate_causal_lm(staged, self.manifest, plan, backend, delegates)


Recipe = PlainRecipe
# Tried in order; the last one claims every manifest.
RECIPES: tuple[type[PlainRecipe], ...] = (CausalLmRecipe, PlainRecipe)
# Steps made from the manifest, in the order they transform the model.
StepFactory = Callable[[ResolvedManifest, str], "RecipeStep | None"]


def _quantize_step(manifest: ResolvedManifest, backend: str) -> RecipeStep | None:
    from trt_edge.pipeline.quantize import quantize_step

    return quantize_step(manifest, backend)


def _tensorrt_precision_step(manifest: ResolvedManifest, backend: str) -> RecipeStep | None:
    from trt_edge.pipeline.quantize import tensorrt_precision_step

    step: RecipeStep | None = tensorrt_precision_step(manifest, backend)
    return step


STEP_FACTORIES: list[StepFactory] = [_quantize_step, _tensorrt_precision_step]


def recipe_for(manifest: ResolvedManifest, backend: str) -> PlainRecipe:
    """The recipe that builds `manifest` for `backend`, with the steps the manifest asks."""
    steps = tuple(
        step for factory in STEP_FACTORIES if (step := factory(manifest, backend)) is not None
    )
    for cls in RECIPES:
        if cls.claims(manifest):
            return cls(manifest, steps)
    raise AssertionError("PlainRecipe claims every manifest")
