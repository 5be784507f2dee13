"""`trt-edge rollout PLAN.yaml --inventory INV [--dry-run]`: staged rollout on Ansible."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "rollout",
        help="roll a signed bundle out to a fleet in waves (Ansible)",
        description=(
            "Plan waves over the inventory's devices whose facts fit the bundle's target "
            "(others are skipped and reported), then per wave run a rendered playbook with "
            "ansible-playbook: copy, install, health-check, roll back failures. Crossing the "
            "plan's failure threshold stops the rollout before the next wave."
        ),
    )
    parser.add_argument("plan", metavar="PLAN.yaml", type=Path)
    parser.add_argument("--inventory", "-i", required=True, type=Path, help="Ansible inventory")
    parser.add_argument("--dry-run", action="store_true", help="plan and render only")
    parser.add_argument(
        "--workdir", type=Path, default=None, help="keep playbook, logs, device reports here"
    )
    parser.add_argument("--report", type=Path, default=None, help="write the JSON report here")
    parser.add_argument("--json", action="store_true", help="print the JSON report, no table")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from trt_edge_runner.agent.durable import write_atomic

    from trt_edge.fleet.errors import RolloutError
    from trt_edge.fleet.execute import run_rollout
    from trt_edge.fleet.plan import load_plan

    def say(message: str) -> None:
        if not args.json:
            print(message, flush=True)

    try:
        plan = load_plan(args.plan)
        report = run_rollout(
            plan, args.inventory, dry_run=args.dry_run, workdir=args.workdir, progress=say
        )
    except RolloutError as exc:
        print(f"trt-edge rollout: error: {exc}", file=sys.stderr)
        return exc.exit_code
    if args.report is not None:
        args.report.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(args.report, report.to_json().encode("utf-8"))
    if args.json:
        sys.stdout.write(report.to_json())
    else:
        report.render()
    bad = {"failed", "rolled_back", "unreachable", "not_attempted"}
    return 1 if report.halted or any(d.result in bad for d in report.devices) else 0
