"""Timing helper the benchmarks share: the median wall time of repeated calls.

The median, not the mean or the minimum: on a shared 2-core machine one call
now and then is slowed by a neighbour, and the median ignores those without
pretending the machine is idle. Imported by the `bench_*.py` scripts, which run
with this folder on `sys.path`.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def median_seconds(fn: Callable[[], object], repeat: int, *, warmup: bool = False) -> float:
    """Median seconds of `repeat` calls of `fn`; `warmup` first makes one untimed call
    (first calls pay allocation and kernel set-up)."""
    if warmup:
        fn()
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)
