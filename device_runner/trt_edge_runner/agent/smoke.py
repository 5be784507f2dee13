"""Run every phase of a bundle once to warm up, then a few timed runs: the install smoke test
and the health check share this so their latencies are comparable.

Inputs are random arrays at each phase's profile `opt` shape (the shape the
engine was tuned for); `auto` phases use profile 0's. Timing is the runner's own
measurement of `execute`, median of `runs`.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from pathlib import Path

from trt_edge_runner.bundle_format import BundleManifest


@dataclass(frozen=True)
class PhaseTiming:
    phase: str
    profile: int
    median_ms: float


def phase_dims(manifest: BundleManifest, phase: str) -> tuple[int, dict[str, int]]:
    """(profile index, symbol values) a smoke run of `phase` uses."""
    target = manifest.runtime.phases[phase]
    index = target if isinstance(target, int) else 0
    index = index if 0 <= index < len(manifest.profiles) else 0
    return index, manifest.profiles[index].opt_symbols()


def run_every_phase(bundle_dir: Path, runs: int = 3) -> list[PhaseTiming]:
    """Open `bundle_dir` with the runner and time each phase; RunnerError on any failure."""
    from trt_edge_runner.runner import Runner
    from trt_edge_runner.tensors import random_inputs

    if runs < 1:
        raise ValueError(f"runs must be at least 1, got {runs}")
    runner = Runner.open(bundle_dir)
    timings: list[PhaseTiming] = []
    for phase in runner.phases:
        profile, dims = phase_dims(runner.manifest, phase)
        inputs = random_inputs(runner.manifest, dims, seed=0)
        runner.run(phase, inputs)
        seconds = [runner.run(phase, inputs).seconds for _ in range(runs)]
        timings.append(PhaseTiming(phase, profile, statistics.median(seconds) * 1000.0))
    return timings
