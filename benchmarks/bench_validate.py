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
    _time(validate), _time(floor)  # warm the page cache and .pyc files
    ours: list[float] = []
    base: list[float] = []
    for _ in range(ROUNDS):
        ours.append(_time(validate))
        base.append(_time(floor))
    mo, mb = statistics.median(ours), statistics.median(base)
    print(f"trt-edge validate {MANIFEST.relative_to(REPO)}: median {mo * 1000:.0f} ms")
    print(f'python -c "import yaml, pydantic":           median {mb * 1000:.0f} ms')
    print(f"ratio validate / import floor: {mo / mb:.2f} (goal <= 1.5, {ROUNDS} rounds each)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
