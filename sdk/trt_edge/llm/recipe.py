"""The recipe of a Hugging Face causal LM (`model.huggingface`): registered under the
model kind `huggingface` in the entry-point group `trt_edge.recipes` (sdk/pyproject.toml),
so `trt_edge.pipeline` builds it without importing this package (docs/design.md).

A static-KV-cache wrapper exported over `seq` (`trt_edge.llm.export`), the tokenizer and
the `llm` section in the bundle (`trt_edge.llm.section`), and validation against the
folder run by transformers — parity, state, generation (`trt_edge.llm.validation`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from trt_edge_runner.bundle_format import DelegateInfo, LlmSection, TensorSpec

from trt_edge.llm.export import export_causal_lm
from trt_edge.llm.loading import folder_digest, load_for_export
from trt_edge.llm.lowering import causal_lm_recipe, refuse_fused_on
from trt_edge.llm.section import bundle_files, llm_section, recipe_files
from trt_edge.llm.validation import validate_causal_lm
from trt_edge.pipeline.bundle import package_versions
from trt_edge.pipeline.code_digest import stage_code_digest
from trt_edge.pipeline.load_model import LoadedModel, SourceDigest
from trt_edge.pipeline.lower import LoweringRecipe
from trt_edge.pipeline.plan import ExportPlan
from trt_edge.pipeline.recipes import PlainRecipe
from trt_edge.pipeline.validate import ValidationReport

# What the recipe runs, by its imports: a change to any of it invalidates its cache entries.
CODE_ENTRIES = ("trt_edge.llm.recipe",)


class CausalLmRecipe(PlainRecipe):
    """A Hugging Face causal LM (`model.huggingface`): a static-KV-cache wrapper exported
    over `seq` (`trt_edge.llm`), the tokenizer and the `llm` section in the bundle, and
    validation against the folder run by transformers (parity, state, generation)."""

    name = "huggingface-causal-lm"
    validates_loaded_model = False  # the reference is the folder, loaded by transformers
    PACKAGES = ("transformers", "tokenizers", "safetensors")

    def packages(self) -> tuple[str, ...]:
        return self.PACKAGES

    def source_digest(self) -> SourceDigest:
        return folder_digest(self.manifest)

    def code(self) -> str:
        """Hash of the code the recipe runs (the wrapper, rewrites, passes, validation)."""
        return stage_code_digest(CODE_ENTRIES)

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
        return {
            **super().validate_key(source_sha256, files),
            "source": source_sha256,
            "recipe": self.code(),
            "recipe_files": {n: hashlib.sha256(d).hexdigest() for n, d in sorted(files.items())},
            "packages": package_versions(self.PACKAGES),
        }

    def load(self) -> LoadedModel:
        return LoadedModel(module=load_for_export(self.manifest), exported=None)

    def export(self, plan: ExportPlan, loaded: LoadedModel) -> Any:
        return export_causal_lm(self.manifest, plan, self.transformed(loaded.module))

    def lowering(self, backend: str) -> LoweringRecipe | None:
        source = self.manifest.huggingface
        assert source is not None
        refuse_fused_on(backend, source.attention, self.manifest.source_path)
        return causal_lm_recipe(backend)

    def files(self, module: Any) -> dict[str, bytes]:
        return recipe_files(self.manifest, module)

    def bundle_files(self, files: dict[str, bytes]) -> dict[str, bytes]:
        return bundle_files(files)

    def llm_section(
        self, files: dict[str, bytes], outputs: tuple[TensorSpec, ...]
    ) -> LlmSection | None:
        return llm_section(files, "forward", outputs)

    def validate(
        self,
        staged: Path,
        plan: ExportPlan,
        backend: str,
        delegates: tuple[DelegateInfo, ...],
        loaded: Callable[[], LoadedModel],
    ) -> ValidationReport:
        return validate_causal_lm(staged, self.manifest, plan, backend, delegates)
