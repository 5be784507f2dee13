"""`trt-edge-device health [--json]`: run every phase; exit 1 when the gate fails.

Run every phase of the active bundle (in the C++ runner trt-edge-run, a child
process), --warmup untimed then --runs timed runs each, and compare the median with
the baseline recorded at install. Exit 1 when a phase fails (the runner refuses,
crashes or times out), exceeds the device's latency budget, or is slower than its
baseline by more than the largest of the relative bound, the install spread times
its factor and the absolute floor (device.json `health`). Each phase's line says
which of them set its limit.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace

from trt_edge_runner.agent.config import (
    DEFAULT_LATENCY_RUNS,
    DEFAULT_WARMUP_RUNS,
    add_location_arguments,
    add_runner_arguments,
    load_health_settings,
)
from trt_edge_runner.agent.health import check_health
from trt_edge_runner.agent.smoke import open_executor
from trt_edge_runner.agent.store import DeviceStore
from trt_edge_runner.cli_args import add_json_argument, at_least
from trt_edge_runner.cli_shell import Command


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_json_argument(parser, help="print the report as JSON")
    parser.add_argument(
        "--max-regression",
        type=float,
        default=None,
        help="allowed slowdown vs baseline as a fraction (0.5 = 50%%); overrides device.json",
    )
    parser.add_argument(
        "--runs",
        type=at_least(1),
        default=DEFAULT_LATENCY_RUNS,
        help=f"timed runs per phase, judged by their median (default {DEFAULT_LATENCY_RUNS})",
    )
    parser.add_argument(
        "--warmup",
        type=at_least(0),
        default=DEFAULT_WARMUP_RUNS,
        help=f"untimed runs per phase first (default {DEFAULT_WARMUP_RUNS}, as at install)",
    )
    add_location_arguments(parser)
    add_runner_arguments(parser, default_executor="cpp")


def run(args: argparse.Namespace) -> int:
    settings = load_health_settings(args.config)
    if args.max_regression is not None:
        settings = replace(settings, max_latency_regression=args.max_regression)
    report = check_health(
        # No --version probe: health changes nothing, and the run's own document is checked.
        DeviceStore(args.root),
        settings,
        lambda: open_executor(args, probe=False),
        runs=args.runs,
        warmup=args.warmup,
    )
    if args.json:
        print(json.dumps(report.to_dict(), sort_keys=True))
    else:
        print(f"{report.name} {report.version} (slot {report.slot})")
        for phase in report.phases:
            mark = "ok  " if phase.ok else "FAIL"
            spreads = f"spread {_ms(phase.spread_ms)}, at install {_ms(phase.baseline_spread_ms)}"
            print(f"  {mark} {phase.phase}: {phase.reason} ({spreads})")
    if not report.ok:  # the job ran and found problems: a report, not an error
        print(f"{args.command_prog}: FAILED: {report.reason}", file=sys.stderr)
        return 1
    return 0


def _ms(value: float | None) -> str:
    return "none" if value is None else f"{value:.3f} ms"


COMMAND = Command(
    "run every phase of the active bundle against its install baseline",
    add_arguments=add_arguments,
    run=run,
)
