"""Startup cost of `trt-edge validate` against the floor it cannot beat.

`trt-edge validate examples/tiny_llm/manifest.yaml` (a fresh process, as a user
runs it) vs `python -c "import yaml, pydantic"` (the libraries it needs), timed
alternately in the same run so machine load affects both alike. Goal: ratio
<= 1.5. Prints medians and the ratio; exits 0 either way (a figure, not a test).
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MANIFEST = REPO / "examples" / "tiny_llm" / "manifest.yaml"
ROUNDS = 15


# As a user runs it: bytecode cached. (This project's CI exports PYTHONDONTWRITEBYTECODE,
# which would make every run recompile trt_edge from source and measure the compiler.)
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _time(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
    return time.perf_counter() - start


def main() -> int:
    exe = shutil.which("trt-edge", path=str(Path(sys.executable).parent))
    validate = [exe] if exe else [sys.executable, "-m", "trt_edge"]
    validate += ["validate", str(MANIFEST)]
    floor = [sys.executable, "-c", "import yaml, pydantic"]
    # The same check without the CLI: separates the manifest loader's own cost from
    # what discovering every sub-command module costs (their module-level imports).
    library = [
        sys.executable,
        "-c",
        f"from trt_edge.manifest import load_manifest; load_manifest({str(MANIFEST)!r})",
    ]
    commands = {"validate": validate, "floor": floor, "library": library}
    for argv in commands.values():
        _time(argv)  # warm the page cache and .pyc files
    samples: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(ROUNDS):
        for name, argv in commands.items():
            samples[name].append(_time(argv))
    med = {name: statistics.median(values) for name, values in samples.items()}
    print(f"trt-edge validate {MANIFEST.relative_to(REPO)}: median {med['validate'] * 1000:.0f} ms")
    print(f"load_manifest() in a bare interpreter:        median {med['library'] * 1000:.0f} ms")
    print(f'python -c "import yaml, pydantic":            median {med["floor"] * 1000:.0f} ms')
    print(
        f"ratio validate / import floor: {med['validate'] / med['floor']:.2f} "
        f"(goal <= 1.5, {ROUNDS} rounds each, interleaved)"
    )
    print(f"ratio load_manifest / import floor: {med['library'] / med['floor']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
