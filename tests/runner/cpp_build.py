"""Is the `make test-cpp` build of the C++ runner up to date with its sources?"""

from __future__ import annotations

from pathlib import Path

from tests.helpers.paths import CPP_SRC

RUNNER_TARGETS = ("trt-edge-run", "trt-edge-run-threads")


# What each binary is built from besides the shared core (runner/*.h, the core .cpp
# files, the policy headers): its own main file.
OWN_MAIN = {"trt-edge-run": "main.cpp", "trt-edge-run-threads": "threads_check.cpp"}


def runner_sources(cpp_src: Path = CPP_SRC, target: str | None = None) -> list[Path]:
    """The files `target` (default: any runner binary) is compiled from.

    CMake files are left out: a CMake edit need not relink anything, so a binary
    would look stale forever; cmake's own dependency tracking covers them when
    the fixture rebuilds.
    """
    others = {main for name, main in OWN_MAIN.items() if target is not None and name != target}
    return [
        *(p for p in (cpp_src / "runner").glob("*.cpp") if p.name not in others),
        *(cpp_src / "runner").glob("*.h"),
        *(cpp_src / "include").rglob("*.h"),
    ]


def stale_binaries(build_runner_dir: Path, cpp_src: Path = CPP_SRC) -> list[str]:
    """Names of the runner binaries in `build_runner_dir` missing or older than a source.

    A binary older than its sources would test yesterday's code: the tests must
    then rebuild rather than pass (or fail) against a stale build.
    """
    stale = []
    for name in RUNNER_TARGETS:
        binary = build_runner_dir / name
        sources = runner_sources(cpp_src, name)
        newest = max((p.stat().st_mtime for p in sources), default=0.0)
        if not binary.is_file() or binary.stat().st_mtime < newest:
            stale.append(name)
    return stale
