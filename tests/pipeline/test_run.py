"""The whole pipeline on a small model: cache reuse, corruption recovery, failures, determinism.

Real export, real ExecuTorch lowering (portable: fast; xnnpack for determinism),
real runtime validation; only the model is small.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from trt_edge.pipeline.cache import StageCache
from trt_edge.pipeline.errors import ValidationFailedError
from trt_edge.pipeline.events import BuildEvent, StageFinished, StageStarted
from trt_edge.pipeline.run import BuildOptions, build
from trt_edge.pipeline.stages import STAGE_NAMES

pytestmark = pytest.mark.slow

WriteProject = Callable[..., Path]

# Eager and exported disagree: torch.export bakes in `calls` as it was while tracing,
# while every eager call afterwards adds one more. Validation must catch it.
DRIFTING_FORWARD = """
self.calls += 1
return self.linear(x) + float(self.calls)
"""


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _bundle_doc(bundle: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((bundle / "bundle.json").read_bytes())
    return doc


def _options(tmp_path: Path, **kw: object) -> BuildOptions:
    base: dict[str, object] = {
        "out_dir": tmp_path / "out",
        "cache_dir": tmp_path / "cache",
        "source_date_epoch": 1_700_000_000,
    }
    base.update(kw)
    return BuildOptions(**base)  # type: ignore[arg-type]


class _Recorder:
    """An event sink that notes every stage event, in order."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str]] = []

    def __call__(self, event: BuildEvent) -> None:
        if isinstance(event, StageStarted):
            self.events.append(("started", event.stage))
        elif isinstance(event, StageFinished):
            self.events.append(("finished", event.stage))


def test_unchanged_rebuild_reuses_every_stage_and_writes_the_same_bytes(
    write_project: WriteProject, tmp_path: Path
) -> None:
    manifest = write_project()
    recorder = _Recorder()
    first = build(manifest, _options(tmp_path, events=[recorder]))
    assert not any(first.cached.values())
    # The stages ran in the order of STAGES, each once, and were reported so.
    assert list(first.stage_seconds) == list(STAGE_NAMES) == list(first.cached)
    assert recorder.events == [(e, n) for n in STAGE_NAMES for e in ("started", "finished")]
    pte, doc = _digest(first.bundle_dir / "model.pte"), _bundle_doc(first.bundle_dir)
    second = build(manifest, _options(tmp_path))
    assert second.cached["lower"] and second.cached["validate"]
    assert "export" not in second.stage_seconds  # not even loaded: the lowered program was cached
    assert list(second.stage_seconds) == [n for n in STAGE_NAMES if n != "export"]
    assert _digest(second.bundle_dir / "model.pte") == pte
    # bundle.json differs only where it says which stages came from the cache.
    again = _bundle_doc(second.bundle_dir)
    env = doc["provenance"]["environment"]["id"]
    assert doc["provenance"].pop("stages") == {
        stage: {"cached": False, "computed_in": env} for stage in ("export", "lower", "validate")
    }
    assert again["provenance"].pop("stages") == {
        stage: {"cached": True, "computed_in": env} for stage in ("lower", "validate")
    }
    assert again == doc
    third = build(manifest, _options(tmp_path, use_cache=False))
    assert not third.cached["lower"] and not third.cached["validate"]


def test_corrupted_cache_entry_is_detected_and_rebuilt(
    write_project: WriteProject, tmp_path: Path
) -> None:
    manifest = write_project()
    first = build(manifest, _options(tmp_path))
    pte = _digest(first.bundle_dir / "model.pte")
    entries = list((tmp_path / "cache" / "lower").glob("*/*/model.pte"))
    assert len(entries) == 1
    entries[0].write_bytes(entries[0].read_bytes()[:-7] + b"garbage")
    again = build(manifest, _options(tmp_path))
    assert not again.cached["lower"]  # the bad entry was not used
    assert again.cached["export"]  # the intact export entry was
    assert _digest(again.bundle_dir / "model.pte") == pte
    assert StageCache(tmp_path / "cache").get("lower", entries[0].parent.name) is not None


def test_failed_validation_keeps_the_previous_bundle_and_writes_the_report(
    write_project: WriteProject, linear_model: Callable[..., str], tmp_path: Path
) -> None:
    good_manifest = write_project()
    good = build(good_manifest, _options(tmp_path))
    before = {p.name: _digest(p) for p in good.bundle_dir.rglob("*") if p.is_file()}
    with pytest.raises(ValidationFailedError) as info:
        drifting = linear_model(DRIFTING_FORWARD, name="Drift", init="self.calls = 0")
        build(write_project(drifting), _options(tmp_path))
    assert info.value.exit_code == 1
    assert "output 0 max abs error" in str(info.value)
    after = {p.name: _digest(p) for p in good.bundle_dir.rglob("*") if p.is_file()}
    assert after == before
    report = json.loads(Path(str(info.value.report_path)).read_bytes())
    assert report["ok"] is False and report["failures"]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "small-1.0.0",
        "small-1.0.0.validation-failed.json",
    ]
    # A later good build removes the stale report (it no longer describes the bundle).
    build(good_manifest, _options(tmp_path))
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["small-1.0.0"]


def test_two_clean_builds_are_byte_identical(write_project: WriteProject, tmp_path: Path) -> None:
    manifest = write_project(backend="xnnpack")
    a = build(manifest, _options(tmp_path / "a", use_cache=False))
    b = build(manifest, _options(tmp_path / "b", use_cache=False))
    for name in ("model.pte", "bundle.json", "reports/validation.json"):
        assert (a.bundle_dir / name).read_bytes() == (b.bundle_dir / name).read_bytes(), name
    doc = json.loads((a.bundle_dir / "bundle.json").read_bytes())
    assert doc["backend"] == "xnnpack"
    assert doc["provenance"]["source_date_epoch"] == 1_700_000_000


class _InterruptAt:
    """An event sink that presses Ctrl-C when `stage` starts (what a user does)."""

    def __init__(self, stage: str) -> None:
        self.stage = stage

    def __call__(self, event: BuildEvent) -> None:
        if isinstance(event, StageStarted) and event.stage == self.stage:
            raise KeyboardInterrupt


def test_interrupted_build_leaves_the_previous_bundle_and_no_staging_dir(
    write_project: WriteProject, tmp_path: Path
) -> None:
    manifest = write_project()
    good = build(manifest, _options(tmp_path))
    before = _digest(good.bundle_dir / "bundle.json")
    manifest.write_text(manifest.read_text().replace("max: 16", "max: 32"))  # a real change
    with pytest.raises(KeyboardInterrupt):
        build(manifest, _options(tmp_path, events=[_InterruptAt("validate")]))
    assert _digest(good.bundle_dir / "bundle.json") == before
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["small-1.0.0"]


# Exports fine (the check is skipped while exporting) but raises in eager for big inputs.
EAGER_RAISES_FORWARD = """
if not torch.compiler.is_exporting() and x.shape[0] > 8:
    raise ValueError("eager refuses more than 8 rows")
return self.linear(x)
"""


def test_eager_model_raising_during_validation_fails_the_build_cleanly(
    write_project: WriteProject, linear_model: Callable[..., str], tmp_path: Path
) -> None:
    picky = linear_model(EAGER_RAISES_FORWARD, name="Picky")
    with pytest.raises(ValidationFailedError) as info:
        build(write_project(picky), _options(tmp_path))
    assert "eager PyTorch raised ValueError: eager refuses more than 8 rows" in str(info.value)
    assert info.value.exit_code == 1
    assert not (tmp_path / "out" / "small-1.0.0").exists()
