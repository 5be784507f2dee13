"""The build's stages, in the order `build()` runs them: the one list everything else reads.

`trt_edge.pipeline.run.build` times each stage under these names, the CLI's progress
display draws one line per stage from this list, the stage cache files its entries
under the names of the stages it caches, `BuildResult.stage_seconds`/`cached` are
keyed by them, and docs/building.md ("The stages") lists them in this order (a test
holds that page and `build()` to it).

Why validation comes before the bundle is final but after it is written: it runs
the *staged* bundle directory through the device runner — the very files and code
path a device uses — so the bundle must exist first, and only a bundle that passed
is committed. Plain data and the standard library only: `trt-edge --help` reads it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Stage:
    """One stage: the name used in logs, the cache and results, and what it does, in a line."""

    name: str
    summary: str


LOAD = Stage("load", "read and check the manifest, hash the model source, pick backend and target")
PLAN = Stage("plan", "one export Dim per symbol over the union of the profiles; the sample shapes")
EXPORT = Stage("export", "torch.export over the export domain (or load the saved .pt2)")
LOWER = Stage("lower", "the backend (xnnpack, portable, tensorrt) turns the program into a .pte")
BUNDLE = Stage("bundle", "write model.pte and bundle.json into a staging dir beside the final path")
VALIDATE = Stage("validate", "run the staged bundle through the device runner against eager")
COMMIT = Stage("commit", "add the validation report, seal bundle.json, swap the bundle into place")

STAGES: tuple[Stage, ...] = (LOAD, PLAN, EXPORT, LOWER, BUNDLE, VALIDATE, COMMIT)
STAGE_NAMES: tuple[str, ...] = tuple(stage.name for stage in STAGES)


def flow() -> str:
    """The stage order as one line, e.g. for `--help`: `load → plan → … → commit`."""
    return " → ".join(STAGE_NAMES)
