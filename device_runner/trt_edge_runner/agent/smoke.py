"""Run every phase of a bundle a few times to warm up, then many timed runs: the install smoke
test (which records the baseline) and the health check share this, with the same counts,
so their latencies are comparable.

Inputs are random arrays at each phase's profile `opt` shape (the shape the
engine was tuned for); `auto` phases use profile 0's; integer inputs stay inside
their declared `values`. Timing is the runner's own measurement of `execute`; every
timed run is kept, and `agent/latency.py` summarises them (median, spread).

Two engines do it. `CppExecutor` (the default) runs the C++ runner `trt-edge-run
phases` as a child process, so a crash inside ExecuTorch is a failed run,
not a dead agent, and the device needs no torch, executorch or numpy.
`PythonExecutor` runs ExecuTorch's Python runtime in this process: an explicit
opt-in (`--engine python`, device.json `engine`) for a device that has it.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from trt_edge_runner.agent.config import (
    DEFAULT_LATENCY_RUNS,
    DEFAULT_WARMUP_RUNS,
    find_runner,
    load_runner_settings,
)
from trt_edge_runner.agent.latency import LatencySummary, summarize
from trt_edge_runner.agent.runner_process import RunnerProcess
from trt_edge_runner.bundle_format import BundleManifest
from trt_edge_runner.runner import Runner
from trt_edge_runner.tensors import random_inputs


@dataclass(frozen=True)
class PhaseTiming:
    """One phase's timed runs (ms, in the order they ran), after its warm-up runs."""

    phase: str
    profile: int
    runs_ms: tuple[float, ...]

    @property
    def summary(self) -> LatencySummary:
        return summarize(self.runs_ms)

    @property
    def median_ms(self) -> float:
        return self.summary.median_ms


class PhaseExecutor(Protocol):
    """What executes a bundle's phases for the agent."""

    @property
    def name(self) -> str: ...

    def run_every_phase(self, bundle_dir: Path, runs: int, warmup: int) -> list[PhaseTiming]:
        """`warmup` untimed then `runs` timed runs per phase; a TrtEdgeError for any failure."""
        ...


@dataclass(frozen=True)
class CppExecutor:
    """`trt-edge-run phases` in a child process."""

    runner: RunnerProcess
    name: str = "cpp"

    def run_every_phase(self, bundle_dir: Path, runs: int, warmup: int) -> list[PhaseTiming]:
        _doc, phases = self.runner.run_phases(bundle_dir, runs, warmup=warmup)
        # A runner that reports no runs_ms (the field is optional) has only its median.
        return [PhaseTiming(p.phase, p.profile, p.runs_ms or (p.median_ms,)) for p in phases]


@dataclass(frozen=True)
class PythonExecutor:
    """ExecuTorch's Python runtime in this process (imports torch: slow to start)."""

    name: str = "python"

    def run_every_phase(self, bundle_dir: Path, runs: int, warmup: int) -> list[PhaseTiming]:
        runner = Runner.open(bundle_dir)
        timings: list[PhaseTiming] = []
        for phase in runner.phases:
            profile, dims = phase_dims(runner.manifest, phase)
            inputs = random_inputs(runner.manifest, dims, seed=0)
            for _ in range(warmup):
                runner.run(phase, inputs)
            ms = tuple(runner.run(phase, inputs).seconds * 1000.0 for _ in range(runs))
            timings.append(PhaseTiming(phase, profile, ms))
        return timings


def phase_dims(manifest: BundleManifest, phase: str) -> tuple[int, dict[str, int]]:
    """(profile index, symbol values) a smoke run of `phase` uses."""
    target = manifest.runtime.phases[phase]
    index = target if isinstance(target, int) else 0
    index = index if 0 <= index < len(manifest.profiles) else 0
    return index, manifest.profiles[index].opt_symbols()


def run_every_phase(
    bundle_dir: Path,
    executor: PhaseExecutor,
    runs: int = DEFAULT_LATENCY_RUNS,
    warmup: int = DEFAULT_WARMUP_RUNS,
) -> list[PhaseTiming]:
    """Time each phase of `bundle_dir` with `executor`; a TrtEdgeError on any failure."""
    if runs < 1 or warmup < 0:
        raise ValueError(f"runs must be at least 1 and warmup at least 0, got {runs}, {warmup}")
    return executor.run_every_phase(bundle_dir, runs, warmup)


def open_runner(args: argparse.Namespace, *, probe: bool = True) -> RunnerProcess:
    """The C++ runner the command's `--runner`/`$TRT_EDGE_RUNNER`/device.json/PATH names,
    checked to answer (unless `probe=False`); RunnerNotFound or RunnerBroken otherwise."""
    settings = load_runner_settings(args.config)
    found = find_runner(args.runner, args.config, settings)
    return RunnerProcess.open(found, settings.timeout_s, probe=probe)


def executor_name(args: argparse.Namespace, default: str = "cpp") -> str:
    """`--engine`, else device.json `engine`, else `default`."""
    if args.engine is not None:
        return str(args.engine)
    if args.config.exists():
        return load_runner_settings(args.config).executor
    return default


def open_executor(args: argparse.Namespace, *, probe: bool = True) -> PhaseExecutor:
    """The executor a command with `--engine/--runner/--config` asked for, ready to run:
    found (and, with `probe`, checked to answer) before any work starts, so a missing or
    broken runner is refused before anything changes."""
    if executor_name(args) == "python":
        return PythonExecutor()
    return CppExecutor(open_runner(args, probe=probe))
