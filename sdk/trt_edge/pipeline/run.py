"""`build()`: the stages of `trt_edge.pipeline.chain`, each a function of the previous
stage's value, chained in the order of `trt_edge.pipeline.stages`:

    load ─▶ plan ─▶ export ─▶ lower ─▶ bundle (staged) ─▶ validate (the staged copy) ─▶ commit

Each stage is timed under its name and reported as typed events
(`trt_edge.pipeline.events`: the progress display, `--events FILE` and the container
build's host read them). The outputs of export, lower and validate are cached under keys
made of everything that can change them (`trt_edge.pipeline.keys`), so an unchanged
rebuild touches neither torch.export nor the backend — nor even imports torch — and a
stage computed in one environment (the local venv, a builder image) is never reused by a
build in another. `bundle.json` says, per stage, whether it came from the cache and which
environment computed it. The manifest is loaded once per build.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import structlog

from trt_edge.pipeline.bundle import check_out_dir
from trt_edge.pipeline.chain import (
    bundle_stage,
    commit_stage,
    export_stage,
    load,
    load_stage,
    lower_stage,
    plan_stage,
    validate_stage,
)
from trt_edge.pipeline.context import BuildContext, BuildOptions
from trt_edge.pipeline.events import BundleWritten
from trt_edge.pipeline.validate import ValidationReport

__all__ = ["BuildOptions", "BuildResult", "build", "load"]

log = structlog.get_logger("trt_edge.pipeline")


@dataclass(frozen=True)
class BuildResult:
    """What a build produced. `stage_seconds`, `stage_peak_rss` (bytes: the process's peak
    resident memory during the stage, `trt_edge.pipeline.peak_memory`) and `cached` are
    keyed by stage name, in the order the stages ran (the order of `STAGES`; a stage that
    was not needed is absent)."""

    bundle_dir: Path
    report: ValidationReport
    stage_seconds: dict[str, float]
    cached: dict[str, bool] = field(default_factory=dict)
    backend: str = ""
    backend_reason: str = ""
    memory_warnings: tuple[str, ...] = ()  # boards of the target that cannot hold the bundle
    stage_peak_rss: dict[str, int] = field(default_factory=dict)


def build(manifest_path: Path | str, options: BuildOptions) -> BuildResult:
    """Build, validate and atomically write `OUT/<name>-<version>/`; raise `BuildError`s."""
    check_out_dir(options.out_dir)  # before the slow stages, not after them
    context = BuildContext.start(options)
    loaded = load_stage(Path(manifest_path), context)
    planned = plan_stage(loaded, context)
    # The exported program is let go of once lowered (it is in no later value).
    lowered = lower_stage(export_stage(planned, context), context)
    staged = bundle_stage(lowered, context)
    # Validation reads the staged files: the program's bytes (the size of the weights)
    # are not kept alive beside the runner's copy.
    del lowered
    try:
        validated = validate_stage(staged, context)
        bundle_dir = commit_stage(validated, context)
    except BaseException:
        staged.bundle.discard()
        raise
    log.info("bundle_written", path=str(bundle_dir), model=loaded.manifest.name)
    context.emit(BundleWritten(str(bundle_dir), loaded.manifest.name))
    timer = context.timer
    return BuildResult(
        bundle_dir=bundle_dir,
        report=validated.report,
        stage_seconds=dict(timer.seconds),
        stage_peak_rss=dict(timer.peak_rss),
        cached=dict(timer.cached),
        backend=loaded.backend,
        backend_reason=loaded.choice.reason,
        memory_warnings=staged.memory_warnings,
    )
