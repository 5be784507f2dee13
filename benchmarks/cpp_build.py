"""Build one target of the C++ runner's tree for a benchmark.

The benchmarks that time C++ (trt-edge-run, the policy bench, the fused-attention
kernel) share the developer build directory the tests use, configured for this
venv's Python so CMake finds the ExecuTorch SDK in it. `cmake --build` decides what
is stale, so a benchmark never times a binary older than its sources.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CPP_SRC = REPO / "device_runner" / "cpp"
CPP_BUILD = CPP_SRC / "build"


def build_target(target: str, build_dir: Path = CPP_BUILD) -> str | None:
    """Build `target` in `build_dir`, configuring it first if needed; None when built,
    else a text saying why not, for the benchmark to print in place of its figures."""
    if shutil.which("cmake") is None:
        return "cmake not installed (make sysdeps); C++ figures not measured"
    commands = []
    if not (build_dir / "CMakeCache.txt").exists():
        commands.append(
            ["cmake", "-S", str(CPP_SRC), "-B", str(build_dir), "-DCMAKE_BUILD_TYPE=Release",
             f"-DPython3_EXECUTABLE={sys.executable}"]
        )  # fmt: skip
    commands.append(["cmake", "--build", str(build_dir), "--target", target, "-j", "2"])
    for command in commands:
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            return f"{' '.join(command)} failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}"
    return None
