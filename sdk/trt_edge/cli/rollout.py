"""`trt-edge rollout PLAN.yaml --inventory INV [--dry-run]`: staged rollout on Ansible.

Plan waves over the inventory's devices whose facts fit the bundle's target
(others are skipped and reported), then per wave run a rendered playbook with
ansible-playbook: copy, install, health-check, roll back failures. Crossing the
plan's failure threshold stops the rollout before the next wave.

Exit 0 every device updated; 1 the rollout ran and a device failed, was rolled
back or unreachable, or the threshold halted it; 2 the plan, inventory, bundle
or a flag cannot be used (nothing was changed).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from trt_edge_runner.cli_args import add_json_argument
from trt_edge_runner.cli_shell import Command
from trt_edge_runner.durable import make_writable_dir, write_atomic
from trt_edge_runner.errors import ResultWriteError, Where

from trt_edge.fleet.errors import RolloutError
from trt_edge.fleet.execute import run_rollout
from trt_edge.fleet.plan import load_plan


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("plan", metavar="PLAN.yaml", type=Path)
    parser.add_argument("--inventory", "-i", required=True, type=Path, help="Ansible inventory")
    parser.add_argument("--dry-run", action="store_true", help="plan and render only")
    parser.add_argument(
        "--workdir", type=Path, default=None, help="keep playbook, logs, device reports here"
    )
    parser.add_argument("--report", type=Path, default=None, help="write the JSON report here")
    add_json_argument(parser, help="print the JSON report, no table")


def check_report_path(report: Path) -> None:
    """Prove `--report` can be written before the rollout changes any device (exit 2 if not)."""
    if report.is_dir():
        raise RolloutError(f"--report {report}: is a directory; name a file, e.g. report.json")
    why = make_writable_dir(report.parent)
    if why is not None:
        raise RolloutError(
            f"--report {report}: cannot write there ({why}); name a file in a writable directory"
        )


def run(args: argparse.Namespace) -> int:
    def say(message: str) -> None:
        if not args.json:
            print(message, flush=True)

    if args.report is not None:
        check_report_path(args.report)
    plan = load_plan(args.plan)
    report = run_rollout(
        plan, args.inventory, dry_run=args.dry_run, workdir=args.workdir, progress=say
    )
    if args.report is not None:
        try:
            write_atomic(args.report, report.to_json().encode("utf-8"))
        except OSError as exc:
            # Devices may have changed: the report must not be lost, so it goes to stdout
            # (under --json inside the error document, which is then stdout's one document).
            if not args.json:
                sys.stdout.write(report.to_json())
            raise ResultWriteError(
                f"cannot write the report ({exc.strerror or exc}); it is on stdout instead",
                where=Where(args.report, option="--report"),
                result=json.loads(report.to_json()),
            ) from None
    if args.json:
        sys.stdout.write(report.to_json())
    else:
        report.render()
    bad = {"failed", "rolled_back", "unreachable", "not_attempted"}
    return 1 if report.halted or any(d.result in bad for d in report.devices) else 0


COMMAND = Command(
    "roll a signed bundle out to a fleet in waves (Ansible)",
    add_arguments=add_arguments,
    run=run,
)
