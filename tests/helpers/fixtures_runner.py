"""The C++ runner binary every area's tests run: `trt_edge_run` (session-scoped).

$TRT_EDGE_RUN when set (ctest sets it to the binary it just built); else the
`make test-cpp` build when it is newer than every runner source (rebuilt in place,
incrementally, when stale); else built into a temporary directory. The rebuild
takes a file lock, so pytest-xdist workers never run two builds in one tree.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.paths import CPP_SRC
from tests.runner.cpp_build import RUNNER_TARGETS, stale_binaries


@pytest.fixture(scope="session")
def trt_edge_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The C++ runner binary: $TRT_EDGE_RUN, the `make test-cpp` build when it is newer
    than every runner source (rebuilt in place when stale), or built here."""
    env = os.environ.get("TRT_EDGE_RUN")
    if env:
        return Path(env)
    made = CPP_SRC / "build" / "runner" / "trt-edge-run"
    if not stale_binaries(made.parent):
        return made
    if (CPP_SRC / "build" / "CMakeCache.txt").is_file():
        # Incremental: cmake rebuilds only what changed since the `make test-cpp` build.
        with open(CPP_SRC / "build" / ".pytest-build.lock", "a+") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            rebuild = ["cmake", "--build", str(CPP_SRC / "build"), "--target", *RUNNER_TARGETS]
            done = subprocess.run(
                [*rebuild, "-j", "2"],
                capture_output=True,
                text=True,
                check=False,
            )
        if done.returncode == 0:  # cmake's dependency tracking decides what was out of date
            return made
    build = tmp_path_factory.mktemp("cpp-build")
    subprocess.run(
        [
            "cmake",
            "-S",
            str(CPP_SRC),
            "-B",
            str(build),
            "-DCMAKE_BUILD_TYPE=Release",
            f"-DPython3_EXECUTABLE={sys.executable}",
        ],
        check=True,
        capture_output=True,
    )
    subprocess.run(
        [
            "cmake",
            "--build",
            str(build),
            "--target",
            *RUNNER_TARGETS,
            "-j",
            "2",
        ],
        check=True,
        capture_output=True,
    )
    return build / "runner" / "trt-edge-run"
