"""The cache keys of the build's cacheable stages, each made of everything that can change
that stage's output (docs/building.md, "The stage cache").

Export: the model source and what names it, the recipe's steps, the manifest's inputs and
profiles, package versions, the model's own requirements, the environment and the code
the stage imports. Lower: the export key, the backend (and the TensorRT flavour and
compute capabilities it builds for), the precision. Validate: the `.pte`'s hash, the
inputs, tolerances and runtime policy, the validation code and what the recipe adds (a
causal LM: its folder, its files and the packages that run it).
"""

from __future__ import annotations

from typing import Any

from trt_edge.manifest.resolved import ResolvedManifest
from trt_edge.pipeline.cache import cache_key
from trt_edge.pipeline.code_digest import EXPORT_ENTRIES, VALIDATE_ENTRIES, stage_code_digest
from trt_edge.pipeline.stages import EXPORT, LOWER, VALIDATE
from trt_edge.pipeline.values import Loaded


def io_doc(manifest: ResolvedManifest) -> dict[str, Any]:
    """The manifest's inputs and profiles, as they enter the export and validate keys."""
    return {
        "inputs": [
            {"name": t.name, "dtype": t.dtype, "shape": list(t.shape), "values": t.values}
            for t in manifest.inputs
        ],
        "profiles": [
            {"name": p.name, "dims": {s: [r.min, r.opt, r.max] for s, r in p.dims.items()}}
            for p in manifest.profiles
        ],
    }


def export_key(loaded: Loaded) -> str:
    recipe = loaded.recipe
    return cache_key(
        stage=EXPORT.name,
        model=recipe.model_key(),
        steps=recipe.steps_key(),
        source=loaded.digest.sha256,
        io=loaded.io,
        packages=loaded.packages,
        requirements=loaded.requirements,
        environment=loaded.environment.id,
        code=stage_code_digest(EXPORT_ENTRIES),
    )


def lower_key(loaded: Loaded, export: str) -> str:
    return cache_key(
        stage=LOWER.name,
        export=export,
        backend=loaded.backend,
        backend_identity=loaded.choice.backend.identity(),
        precision=loaded.manifest.precision,
        steps=loaded.recipe.steps_key(),
        environment=loaded.environment.id,
    )


def validate_key(loaded: Loaded, pte_sha256: str, recipe_files: dict[str, bytes]) -> str:
    manifest = loaded.manifest
    return cache_key(
        stage=VALIDATE.name,
        pte=pte_sha256,
        io=loaded.io,
        tolerance=[manifest.atol, manifest.rtol],
        runtime={"policy": manifest.runtime.policy, "phases": dict(manifest.runtime.phases)},
        code=stage_code_digest(VALIDATE_ENTRIES),
        requirements=loaded.requirements,
        environment=loaded.environment.id,
        **loaded.recipe.validate_key(loaded.digest.sha256, recipe_files),
    )
