"""The runner tests rebuild a C++ binary older than its sources instead of testing it."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from runner.cpp_build import (  # type: ignore[import-not-found]
    CPP_SRC,
    RUNNER_TARGETS,
    runner_sources,
    stale_binaries,
)


def test_sources_cover_the_runner_and_the_policy_header() -> None:
    names = {p.name for p in runner_sources()}
    assert {"main.cpp", "npy.cpp", "profile_policy.h", "CMakeLists.txt"} <= names


def test_binaries_older_than_a_source_are_stale(tmp_path: Path) -> None:
    src = tmp_path / "cpp"
    shutil.copytree(CPP_SRC / "runner", src / "runner", ignore=shutil.ignore_patterns("build"))
    shutil.copytree(CPP_SRC / "include", src / "include")
    shutil.copy(CPP_SRC / "CMakeLists.txt", src / "CMakeLists.txt")
    out = tmp_path / "build" / "runner"
    out.mkdir(parents=True)
    assert stale_binaries(out, src) == list(RUNNER_TARGETS)  # missing = stale
    newest = max(p.stat().st_mtime for p in runner_sources(src))
    for name in RUNNER_TARGETS:
        (out / name).write_bytes(b"\x7fELF")
        os.utime(out / name, (newest + 10, newest + 10))
    assert stale_binaries(out, src) == []
    edited = src / "runner" / "main.cpp"
    os.utime(edited, (newest + 20, newest + 20))  # a source edited after the build
    assert stale_binaries(out, src) == list(RUNNER_TARGETS)
