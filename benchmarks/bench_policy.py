"""Per-call cost of the profile decision: guard + select_profile + input validation.

One execution's worth of policy work for a 2-input, 3-profile table (input_ids
[1, seq] and hidden [1, seq, 16]; decode / mid / prefill), measured in one run
for both implementations and printed side by side:

- Python (`trt_edge_runner`): enter a guard, read `current_request()`,
  `select_profile`, `check_inputs` on the selected profile, leave the guard;
  and the same through `ProfileResolver.resolve` (what the runner calls).
- C++ (`profile_policy.h`): the same steps, measured by the
  `trt_edge_policy_bench` binary that CMake builds next to the conformance
  binary (built here if `make test-cpp` has not built it).

Goals (issue 3): Python median ≤ 5 µs, C++ median ≤ 100 ns. Both sides are
timed in thread CPU time (time.thread_time / CLOCK_THREAD_CPUTIME_ID), medians
over batches, so time the OS gives other processes on a shared machine does not
count (cache and SMT contention still do). Exits 0 whether goals are met or not
(a figure, not a test); 1 only when a measurement cannot be taken.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
import timeit
from collections.abc import Callable

from cpp_build import CPP_BUILD, build_target
from trt_edge_runner.emulation import ProfileResolver
from trt_edge_runner.guard import OptimizationProfileGuard, current_request
from trt_edge_runner.input_check import check_inputs
from trt_edge_runner.policy import ProfileBounds, ProfileTable, select_profile

BENCH_BIN = CPP_BUILD / "trt_edge_policy_bench"
BATCHES = 301
CALLS = 300
PY_GOAL_US = 5.0
CPP_GOAL_NS = 100.0


def table() -> ProfileTable:
    return ProfileTable(
        (
            (ProfileBounds((1, 1), (1, 1)), ProfileBounds((1, 1, 16), (1, 1, 16))),
            (ProfileBounds((1, 1), (1, 512)), ProfileBounds((1, 1, 16), (1, 512, 16))),
            (ProfileBounds((1, 512), (1, 2048)), ProfileBounds((1, 512, 16), (1, 2048, 16))),
        ),
        active=1,
    )


def interleaved_medians_us(fns: dict[str, Callable[[], None]]) -> dict[str, float]:
    """Median µs per call of each fn, batches interleaved so all see the same machine load.

    Short batches (CALLS calls, about a millisecond) rarely span a context switch,
    so the median reflects the code's cost rather than cache refills after one.
    """
    timers = {name: timeit.Timer(fn, timer=time.thread_time) for name, fn in fns.items()}
    samples: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(BATCHES):
        for name, timer in timers.items():
            samples[name].append(timer.timeit(number=CALLS) / CALLS * 1e6)
    return {name: statistics.median(values) for name, values in samples.items()}


def python_figures() -> dict[str, float]:
    t = table()
    dims = [(1, 300), (1, 300, 16)]
    resolver = ProfileResolver(t, names=["input_ids", "hidden"])

    def steps(guard: Callable[[], OptimizationProfileGuard]) -> Callable[[], None]:
        def call() -> None:
            with guard():
                selection = select_profile(t, current_request(), dims)
                assert selection.profile is not None
                check_inputs(t, selection.profile, dims)

        return call

    def via_resolver(guard: Callable[[], OptimizationProfileGuard]) -> Callable[[], None]:
        def call() -> None:
            with guard():
                resolver.resolve(current_request(), dims)

        return call

    pinned = lambda: OptimizationProfileGuard(1)  # noqa: E731
    auto = OptimizationProfileGuard.automatic
    return interleaved_medians_us(
        {
            "pinned": steps(pinned),
            "auto": steps(auto),
            "pinned, via ProfileResolver": via_resolver(pinned),
            "auto, via ProfileResolver": via_resolver(auto),
        }
    )


def cpp_figures() -> dict[str, float] | str:
    """Median ns per call from the C++ bench binary, or why it could not run."""
    problem = build_target(BENCH_BIN.name)
    if problem is not None:
        return f"building the C++ bench failed: {problem}"
    done = subprocess.run(
        [str(BENCH_BIN), "51", "20000"], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        return f"{BENCH_BIN} failed: {done.stderr}"
    doc = json.loads(done.stdout)
    return {"pinned": float(doc["pinned_ns"]), "auto": float(doc["auto_ns"])}


def main() -> int:
    py = python_figures()
    cpp = cpp_figures()
    print("profile decision per call: guard + select_profile + input validation")
    print("2 inputs x 3 profiles; median thread-CPU time per call, measured in this run")
    load = os.getloadavg()[0]
    print(f"machine: {os.cpu_count()} CPUs, load average {load:.1f} (figures rise with load)")
    header = f"{'request':8s} {'Py steps µs':>12s} {'Py resolver µs':>15s} {'C++ ns':>8s}"
    print(header + f" {'Py/C++':>8s}")
    for kind in ("pinned", "auto"):
        steps, resolver = py[kind], py[f"{kind}, via ProfileResolver"]
        ns = f"{cpp[kind]:8.1f}" if isinstance(cpp, dict) else f"{'n/a':>8s}"
        ratio = f"{max(steps, resolver) * 1000 / cpp[kind]:7.0f}x" if isinstance(cpp, dict) else ""
        print(f"{kind:8s} {steps:12.2f} {resolver:15.2f} {ns} {ratio:>8s}")
    worst_py = max(py.values())
    print(
        f"Python goal <= {PY_GOAL_US:.0f} µs: {'met' if worst_py <= PY_GOAL_US else 'MISSED'} "
        f"(worst median {worst_py:.2f} µs)"
    )
    if isinstance(cpp, str):
        print(f"C++: {cpp}", file=sys.stderr)
        return 1
    worst_cpp = max(cpp.values())
    print(
        f"C++ goal <= {CPP_GOAL_NS:.0f} ns: {'met' if worst_cpp <= CPP_GOAL_NS else 'MISSED'} "
        f"(worst median {worst_cpp:.1f} ns)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
