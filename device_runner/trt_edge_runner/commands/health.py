"""`trt-edge-device health [--json]`: run every phase; exit 1 when the gate fails.

Run every phase of the active bundle (in the C++ runner trt-edge-run, a child
process) and compare its latency with the baseline recorded at install. Exit 1
when a phase fails (the runner refuses, crashes or times out), regresses more
than allowed, or exceeds the device's latency budget (device.json `health`).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace

from trt_edge_runner.agent.config import (
    add_location_arguments,
    add_runner_arguments,
    load_health_settings,
)
from trt_edge_runner.agent.health import check_health
from trt_edge_runner.agent.smoke import open_engine
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
        "--runs", type=at_least(1), default=3, help="timed runs per phase (at least 1)"
    )
    add_location_arguments(parser)
    add_runner_arguments(parser, default_engine="cpp")


def run(args: argparse.Namespace) -> int:
    settings = load_health_settings(args.config)
    if args.max_regression is not None:
        settings = replace(settings, max_latency_regression=args.max_regression)
    report = check_health(
        # No --version probe: health changes nothing, and the run's own document is checked.
        DeviceStore(args.root),
        settings,
        lambda: open_engine(args, probe=False),
        runs=args.runs,
    )
    if args.json:
        print(json.dumps(report.to_dict(), sort_keys=True))
    else:
        print(f"{report.name} {report.version} (slot {report.slot})")
        for phase in report.phases:
            mark = "ok  " if phase.ok else "FAIL"
            base = f" (baseline {phase.baseline_ms:.3f} ms)" if phase.baseline_ms else ""
            print(f"  {mark} {phase.phase}: {phase.latency_ms:.3f} ms{base} {phase.reason}")
    if not report.ok:  # the job ran and found problems: a report, not an error
        print(f"{args.command_prog}: FAILED: {report.reason}", file=sys.stderr)
        return 1
    return 0


COMMAND = Command(
    "run every phase of the active bundle against its install baseline",
    add_arguments=add_arguments,
    run=run,
)
