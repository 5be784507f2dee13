"""`trt-edge-device health [--json]`: run every phase; non-zero exit when the gate fails."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from trt_edge_runner.agent.config import add_location_arguments, run_count


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "health",
        help="run every phase of the active bundle against its install baseline",
        description=(
            "Run every phase of the active bundle and compare its latency with the baseline "
            "recorded at install. Exit 1 when a phase fails, regresses more than allowed, or "
            "exceeds the device's latency budget (device.json `health` settings)."
        ),
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument(
        "--max-regression",
        type=float,
        default=None,
        help="allowed slowdown vs baseline as a fraction (0.5 = 50%%); overrides device.json",
    )
    parser.add_argument(
        "--runs", type=run_count, default=3, help="timed runs per phase (at least 1)"
    )
    add_location_arguments(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from trt_edge_runner.agent.config import load_health_settings
    from trt_edge_runner.agent.errors import AgentError
    from trt_edge_runner.agent.health import check_health
    from trt_edge_runner.agent.store import DeviceStore

    try:
        settings = load_health_settings(args.config)
        if args.max_regression is not None:
            settings = replace(settings, max_latency_regression=args.max_regression)
        report = check_health(DeviceStore(args.root), settings, runs=args.runs)
    except AgentError as exc:
        if args.json:
            print(json.dumps({"ok": False, "reason": str(exc)}))
        print(f"trt-edge-device health: {exc}", file=sys.stderr)
        return exc.exit_code
    if args.json:
        print(json.dumps(report.to_dict(), sort_keys=True))
    else:
        print(f"{report.name} {report.version} (slot {report.slot})")
        for phase in report.phases:
            mark = "ok  " if phase.ok else "FAIL"
            base = f" (baseline {phase.baseline_ms:.3f} ms)" if phase.baseline_ms else ""
            print(f"  {mark} {phase.phase}: {phase.latency_ms:.3f} ms{base} {phase.reason}")
    if not report.ok:
        print(f"trt-edge-device health: FAILED: {report.reason}", file=sys.stderr)
        return 1
    return 0
