"""Build a slow artefact (a lowered `.pte`, an example bundle) once per test session.

Under pytest-xdist every worker is its own process with its own session fixtures, so a
plain session fixture would lower the same model once per worker. `build_once` puts the
result in a directory all workers of the session share (the parent of their base temp
dirs) and takes a file lock: the first worker builds, the others wait and reuse what it
built. The results are shared: treat them as read-only (copy before editing).
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


def fixture_cache_dir() -> Path:
    """The build cache the example bundles use across sessions (`$TRT_EDGE_TEST_CACHE`,
    default `~/.cache/trt-edge/tests`), keyed by content like any build cache."""
    env = os.environ.get("TRT_EDGE_TEST_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "trt-edge" / "tests"


@contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on `path` (created if missing) across processes."""
    with open(path, "a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def shared_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The directory every worker of this session sees (the base temp dir without xdist)."""
    base = tmp_path_factory.getbasetemp()
    under_xdist = "PYTEST_XDIST_WORKER" in os.environ  # set by pytest-xdist in its workers
    root = (base.parent if under_xdist else base) / "trt-edge-shared"
    root.mkdir(exist_ok=True)
    return root


def build_once(root: Path, name: str, build: Callable[[Path], Path]) -> Path:
    """`build(root / name)` the first time any worker asks for `name`; its result after.

    `build` gets an empty directory to work in and returns the path it made (a file or a
    directory inside it). A result that has gone missing is built again.
    """
    marker = root / f"{name}.built"
    with locked(root / f"{name}.lock"):
        if marker.is_file():
            made = Path(marker.read_text(encoding="utf-8"))
            if made.exists():
                return made
        work = root / name
        work.mkdir(exist_ok=True)
        made = build(work)
        marker.write_text(str(made), encoding="utf-8")
        return made
