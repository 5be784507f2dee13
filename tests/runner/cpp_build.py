"""Is the `make test-cpp` build of the C++ runner up to date with its sources?"""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CPP_SRC = REPO / "device_runner" / "cpp"

RUNNER_TARGETS = ("trt-edge-run", "trt-edge-run-threads")


def runner_sources(cpp_src: Path = CPP_SRC) -> list[Path]:
    """Every file the C++ runner binaries are built from (sources, headers, CMake files)."""
    return [
        *(cpp_src / "runner").glob("*.cpp"),
        *(cpp_src / "runner").glob("*.h"),
        *(cpp_src / "include").rglob("*.h"),
        *cpp_src.glob("CMakeLists.txt"),
        *(cpp_src / "runner").glob("CMakeLists.txt"),
    ]


def stale_binaries(build_runner_dir: Path, cpp_src: Path = CPP_SRC) -> list[str]:
    """Names of the runner binaries in `build_runner_dir` missing or older than a source.

    A binary older than its sources would test yesterday's code: the tests must
    then rebuild rather than pass (or fail) against a stale build.
    """
    newest = max((p.stat().st_mtime for p in runner_sources(cpp_src)), default=0.0)
    stale = []
    for name in RUNNER_TARGETS:
        binary = build_runner_dir / name
        if not binary.is_file() or binary.stat().st_mtime < newest:
            stale.append(name)
    return stale
