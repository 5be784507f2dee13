"""The runner tests rebuild a C++ binary older than its sources instead of testing it."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from tests.helpers.paths import CPP_SRC
from tests.runner.cpp_build import RUNNER_TARGETS, runner_sources, stale_binaries


def test_sources_cover_the_runner_and_the_policy_header() -> None:
    names = {p.name for p in runner_sources()}
    assert {"main.cpp", "npy.cpp", "threads_check.cpp", "profile_policy.h"} <= names
    threads = {p.name for p in runner_sources(target="trt-edge-run-threads")}
    assert "threads_check.cpp" in threads and "main.cpp" not in threads


def test_binaries_older_than_a_source_are_stale(tmp_path: Path) -> None:
    src = tmp_path / "cpp"
    shutil.copytree(CPP_SRC / "runner", src / "runner", ignore=shutil.ignore_patterns("build"))
    shutil.copytree(CPP_SRC / "include", src / "include")
    out = tmp_path / "build" / "runner"
    out.mkdir(parents=True)
    assert stale_binaries(out, src) == list(RUNNER_TARGETS)  # missing = stale
    newest = max(p.stat().st_mtime for p in runner_sources(src))
    for name in RUNNER_TARGETS:
        (out / name).write_bytes(b"\x7fELF")
        os.utime(out / name, (newest + 10, newest + 10))
    assert stale_binaries(out, src) == []
    # main.cpp edited after the build: only the binary built from it is stale.
    os.utime(src / "runner" / "main.cpp", (newest + 20, newest + 20))
    assert stale_binaries(out, src) == ["trt-edge-run"]
    # A shared header edited after the build: both are.
    os.utime(src / "runner" / "bundle.h", (newest + 30, newest + 30))
    assert stale_binaries(out, src) == list(RUNNER_TARGETS)
