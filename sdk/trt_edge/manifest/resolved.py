"""The resolved manifest: what every later stage (plan, export, lower, bundle) reads.

Loading a manifest (parse → schema → semantic checks) ends here. Everything is
already checked and normalised: labels are compiled to profile indices, symbols
are known, paths are absolute. Later stages never look at YAML again, so they
cannot disagree with `trt-edge validate` about what a manifest means; the parse
step's positions travel along (`locations`, `where()`) so their errors still name
the manifest's `file:line:col`.

Tensor specs, profiles and the runtime policy are the device side's own types
(`trt_edge_runner.bundle_format`), so what the build writes into `bundle.json`
is the very value the manifest resolved to.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from trt_edge_runner.bundle_format import Profile, RuntimePolicy, TensorSpec

from trt_edge.manifest.analysis import export_domain, symbols_of
from trt_edge.manifest.locations import PathPart, SourceLocations
from trt_edge.manifest.quantization import DEFAULT_BUDGETS, Budget, Quantization

Backend = Literal["auto", "tensorrt", "xnnpack", "portable"]


@dataclass(frozen=True)
class HuggingFaceModel:
    """`model.huggingface`, resolved: the folder and what its config.json says."""

    folder: Path  # absolute
    max_cache_len: int
    architecture: str  # e.g. "Gemma3ForCausalLM", one of SUPPORTED_ARCHITECTURES
    model_type: str
    vocab_size: int
    has_tokenizer: bool
    attention: str = "filled"  # "all" or "filled": see HuggingFaceSource.attention
    # `runtime.slots`: KV caches the program holds, one per conversation served at once.
    slots: int = 1


Precision = Literal["fp32", "fp16", "bf16", "int8", "fp8"]


@dataclass(frozen=True)
class ResolvedManifest:
    """A checked manifest. Built only by `trt_edge.manifest.load_manifest`."""

    source_path: Path  # absolute path of the manifest file
    source_sha256: str  # sha256 of the manifest file's bytes
    name: str
    version: str
    # At most one of these is set (none for a huggingface model): `entrypoint` is
    # "file.py:fn" (file relative to the manifest directory) or "package.module:fn";
    # `exported` is an absolute path to a saved torch.export program (.pt2).
    entrypoint: str | None
    exported: Path | None
    inputs: tuple[TensorSpec, ...]  # forward() argument order
    profiles: tuple[Profile, ...]  # position = the profile index that ships
    runtime: RuntimePolicy  # phases compiled to profile indices (or "auto")
    backend: Backend
    precision: Precision
    targets: tuple[str, ...]  # ids from the target catalog
    atol: float
    rtol: float
    # Where each value sat in the YAML, for errors found after loading. Not part of what
    # the manifest means: manifests that differ only in layout compare equal.
    locations: SourceLocations = field(compare=False, repr=False)
    # Set when the model is a Hugging Face folder (then `entrypoint` and `exported` are
    # None and `inputs` are the recipe's, implied or checked equal to them).
    huggingface: HuggingFaceModel | None = None
    # `model.requirements`, as written (stripped), in order: pip requirement lines.
    requirements: tuple[str, ...] = ()
    # `build.memory_headroom_mib`: None means the default (trt_edge_runner.memory_budget).
    memory_headroom_mib: int | None = None
    # `runtime.generation`: the generation contract declared into bundle.json, or None.
    generation: str | None = None
    # `build.quantize` (None: weights as trained) and `validate.budgets` as written.
    quantize: Quantization | None = None
    budgets: dict[str, dict[str, float]] = field(default_factory=dict)

    def budget(self, label: str) -> Budget:
        """The budget of a bundle labelled `label`: the defaults, overridden field by field."""

        default = DEFAULT_BUDGETS.get(label, Budget(self.atol, 1.0, 0.01))
        given = self.budgets.get(label, {})
        return Budget(
            max_abs=given.get("max_abs", default.max_abs),
            min_agreement=given.get("min_agreement", default.min_agreement),
            max_kl=given.get("max_kl", default.max_kl),
        )

    @property
    def manifest_dir(self) -> Path:
        return self.source_path.parent

    def where(self, *path: PathPart) -> str:
        """`FILE:LINE:COL` of the value at `path` (e.g. `"build", "precision"`) in the manifest,
        or of the nearest enclosing value: the place a later stage's error points at."""
        return self.locations.where(*path)

    def export_domain(self) -> dict[str, tuple[int, int]]:
        """Per symbol, (min of mins, max of maxes) over all profiles: what torch.export sees.
        Symbols in order of first use in `inputs`."""
        return export_domain(self.profiles, symbols_of(self.inputs))

    def symbols(self) -> tuple[str, ...]:
        """Symbol names in order of first use in `inputs`."""
        return symbols_of(self.inputs)
