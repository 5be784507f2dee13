"""Bundles come out world-readable (dirs 0755, files 0644), from local and container builds.

A bundle is shipped to devices and read by other users and services (the device agent,
a web server handing out tarballs); the staging directory comes from mkdtemp (0700), so
without an explicit mode the published bundle would be readable by its builder only.
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from trt_edge.containers.build_runner import _finish
from trt_edge.pipeline.bundle import StagedBundle
from trt_edge.pipeline.run import BuildOptions, build

MODEL = Path(__file__).parent / "models" / "linear"


def modes(bundle: Path) -> dict[str, int]:
    return {
        p.relative_to(bundle).as_posix() or ".": stat.S_IMODE(p.stat().st_mode)
        for p in (bundle, *bundle.rglob("*"))
    }


def assert_publishable(bundle: Path) -> None:
    found = modes(bundle)
    wrong = {
        rel: oct(mode)
        for rel, mode in found.items()
        if mode != (0o755 if (bundle / rel).is_dir() else 0o644)
    }
    assert wrong == {}, f"modes not 0755/0644 in {bundle}: {wrong}"
    assert any((bundle / rel).is_file() for rel in found)


@pytest.fixture
def strict_umask() -> Iterator[None]:
    """A user with umask 077: files 0600 unless the bundle writer sets modes itself."""
    previous = os.umask(0o077)
    try:
        yield
    finally:
        os.umask(previous)


def test_staged_bundle_is_published_world_readable(tmp_path: Path, strict_umask: None) -> None:
    for content in (b"first", b"second"):  # a fresh bundle, then a replacement
        staged = StagedBundle(tmp_path / "out", "m-1.0.0")
        assert stat.S_IMODE(staged.path.stat().st_mode) == 0o700  # mkdtemp's mode
        (staged.path / "reports").mkdir()
        (staged.path / "model.pte").write_bytes(content)
        (staged.path / "reports" / "validation.json").write_text("{}")
        final = staged.commit()
        assert (final / "model.pte").read_bytes() == content
        assert_publishable(final)


@pytest.mark.slow
def test_local_and_container_host_side_bundles_are_world_readable(
    tmp_path: Path, strict_umask: None
) -> None:
    """A real local build, then the host-side half of a container build (`_finish`: merge
    provenance, swap in) on a copy left private as the container's staging leaves it."""
    project = tmp_path / "linear"
    shutil.copytree(MODEL, project)
    local = build(
        project / "manifest.yaml",
        BuildOptions(out_dir=tmp_path / "local", cache_dir=tmp_path / "cache"),
    ).bundle_dir
    assert_publishable(local)

    staging = tmp_path / "out" / ".trt-edge-container-x"
    produced = staging / local.name
    shutil.copytree(local, produced)
    for path in (staging, produced, *produced.rglob("*")):
        path.chmod(0o700 if path.is_dir() else 0o600)
    final = _finish(staging, tmp_path / "out", {"mode": "container"})
    assert final == tmp_path / "out" / local.name
    assert_publishable(final)
