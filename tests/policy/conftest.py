"""The C++ conformance binaries for the policy tests, built once per session."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.helpers.paths import CPP_SRC
from tests.policy.vector_runs import SDK_FREE_BINARIES


def _fresh(binary: Path) -> bool:
    """`binary` exists and is newer than every source it is built from."""
    if not binary.exists():
        return False
    sources = [
        *(CPP_SRC / "include").rglob("*.h"),
        *(CPP_SRC / "tests").glob("*.cpp"),
        *(CPP_SRC / "tests").glob("*.h"),
        *(CPP_SRC / "runner").glob("bundle*"),
        CPP_SRC / "runner" / "errors.h",
    ]
    return all(binary.stat().st_mtime >= s.stat().st_mtime for s in sources)


@pytest.fixture(scope="session")
def cpp_vector_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The build directory holding the SDK-free conformance binaries: the one `make test-cpp`
    built when they are up to date (make test builds them first), else configured and built
    from device_runner/cpp into a temp dir."""
    made = CPP_SRC / "build"
    if all(_fresh(made / b) for b in SDK_FREE_BINARIES):
        return made
    if shutil.which("cmake") is None or shutil.which("c++") is None:
        pytest.skip("cmake / a C++ compiler not installed (make sysdeps installs them)")
    build = tmp_path_factory.mktemp("cpp-build")
    for cmd in (
        ["cmake", "-S", str(CPP_SRC), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release"],
        ["cmake", "--build", str(build), "--target", *SDK_FREE_BINARIES, "-j", "2"],
    ):
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stdout + done.stderr
    return build


@pytest.fixture(scope="session")
def cpp_conformance(cpp_vector_build: Path) -> Path:
    return cpp_vector_build / "trt_edge_conformance"
