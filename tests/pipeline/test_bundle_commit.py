"""Staged bundles: swapped in whole, or not at all; leftovers of killed builds are swept."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from trt_edge.pipeline.bundle import STAGING_PREFIX, StagedBundle


def _stage(out: Path, content: bytes) -> StagedBundle:
    staged = StagedBundle(out, "m-1.0.0")
    (staged.path / "model.pte").write_bytes(content)
    return staged


def test_first_commit_creates_the_bundle(tmp_path: Path) -> None:
    final = _stage(tmp_path, b"one").commit()
    assert final == tmp_path / "m-1.0.0"
    assert (final / "model.pte").read_bytes() == b"one"
    assert [p.name for p in tmp_path.iterdir()] == ["m-1.0.0"]


def test_commit_replaces_the_previous_bundle_completely(tmp_path: Path) -> None:
    first = _stage(tmp_path, b"one")
    (first.path / "stale.txt").write_text("only in the old bundle")
    first.commit()
    _stage(tmp_path, b"two").commit()
    final = tmp_path / "m-1.0.0"
    assert (final / "model.pte").read_bytes() == b"two"
    assert not (final / "stale.txt").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["m-1.0.0"]


def test_discarded_build_leaves_the_previous_bundle_untouched(tmp_path: Path) -> None:
    _stage(tmp_path, b"good").commit()
    _stage(tmp_path, b"half written").discard()
    assert (tmp_path / "m-1.0.0" / "model.pte").read_bytes() == b"good"
    assert [p.name for p in tmp_path.iterdir()] == ["m-1.0.0"]


def test_staging_dirs_of_dead_builds_are_swept_but_live_ones_kept(tmp_path: Path) -> None:
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    dead_dir = tmp_path / f"{STAGING_PREFIX}{dead.stdout.strip()}-m-1.0.0-abc"
    dead_dir.mkdir()
    live = _stage(tmp_path, b"in progress")  # this process: alive
    other = StagedBundle(tmp_path, "m-1.0.0")
    assert not dead_dir.exists()
    assert live.path.exists() and other.path.exists()
