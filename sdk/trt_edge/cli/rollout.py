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


def check_report_path(report: Path) -> None:
    """Prove `--report` can be written before the rollout changes any device (exit 2 if not)."""
    from trt_edge_runner.durable import make_writable_dir

    from trt_edge.fleet.errors import RolloutError

    if report.is_dir():
        raise RolloutError(f"--report {report}: is a directory; name a file, e.g. report.json")
    why = make_writable_dir(report.parent)
    if why is not None:
        raise RolloutError(
            f"--report {report}: cannot write there ({why}); name a file in a writable directory"
        )


def run(args: argparse.Namespace) -> int:
    from trt_edge_runner.durable import write_atomic

    from trt_edge.fleet.errors import RolloutError
    from trt_edge.fleet.execute import run_rollout
    from trt_edge.fleet.plan import load_plan

    def say(message: str) -> None:
        if not args.json:
            print(message, flush=True)

    try:
        if args.report is not None:
            check_report_path(args.report)
        plan = load_plan(args.plan)
        report = run_rollout(
            plan, args.inventory, dry_run=args.dry_run, workdir=args.workdir, progress=say
        )
    except RolloutError as exc:
        print(f"trt-edge rollout: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except OSError as exc:
        print(f"trt-edge rollout: error: {exc}", file=sys.stderr)
        return 1
    if args.report is not None:
        try:
            write_atomic(args.report, report.to_json().encode("utf-8"))
        except OSError as exc:
            # Devices may have changed: the report must not be lost, so it goes to stdout.
            print(
                f"trt-edge rollout: error: --report {args.report}: cannot write the report "
                f"({exc.strerror or exc}); it is printed as JSON on stdout instead",
                file=sys.stderr,
            )
            sys.stdout.write(report.to_json())
            return 1
    if args.json:
        sys.stdout.write(report.to_json())
    else:
        report.render()
    bad = {"failed", "rolled_back", "unreachable", "not_attempted"}
    return 1 if report.halted or any(d.result in bad for d in report.devices) else 0
