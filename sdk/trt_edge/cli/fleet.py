"""`trt-edge fleet broker-config|status|command`: pull fleets, whose devices connect out over MQTT.

A device behind NAT runs `trt-edge-device mqtt`, which reports to a broker and takes
commands from it. `broker-config` writes the broker's set-up (mosquitto: TLS, a password
per device, an ACL that keeps each device to its own topics); `status` shows every
device's retained state; `command` sends one device update, hold, resume or rollback and
waits for its ack.
"""

from __future__ import annotations

import argparse
import getpass
import secrets
import sys
from pathlib import Path

from trt_edge_runner.cli_args import add_json_argument, positive_seconds, require_file
from trt_edge_runner.cli_shell import Command
from trt_edge_runner.errors import UsageError
from trt_edge_runner.link.broker import add_broker_arguments, broker_settings
from trt_edge_runner.link.desired import PullTarget
from trt_edge_runner.link.documents import Command as LinkCommand
from trt_edge_runner.link.state import now

from trt_edge.fleet.mqtt.broker_config import OPERATOR, BrokerPlan, write_broker_config
from trt_edge.fleet.mqtt.operator_client import fleet_session, read_fleet, send_command
from trt_edge.fleet.mqtt.pull_rollout import PullPlan, run_pull_rollout
from trt_edge.fleet.mqtt.status_view import fleet_status
from trt_edge.fleet.mqtt.tls import TlsFiles
from trt_edge.fleet.plan import load_plan


def _add_config_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", required=True, type=Path, help="folder to write the set-up into")
    parser.add_argument("--fleet", required=True, help="the fleet's name (a topic level)")
    parser.add_argument(
        "--device", action="append", default=[], help="a device's name (repeat for each)"
    )
    parser.add_argument("--port", type=int, default=8883, help="the TLS listener's port")
    parser.add_argument("--bind", default="0.0.0.0", help="the address it listens on")
    parser.add_argument(
        "--host",
        action="append",
        default=None,
        help="a name or address devices reach the broker by (the server certificate's; "
        "repeat; default localhost, 127.0.0.1)",
    )
    for flag, what in (
        ("--ca-cert", "the fleet's own CA certificate (devices trust it)"),
        ("--server-cert", "the broker's certificate, signed by --ca-cert"),
        ("--server-key", "the broker certificate's private key"),
    ):
        parser.add_argument(flag, type=Path, default=None, help=f"{what}; default: make one")
    parser.add_argument(
        "--run-as",
        default=None,
        help="the user mosquitto runs as when started as root (it must read these files); "
        f"e.g. {getpass.getuser()}",
    )


def _own_tls(args: argparse.Namespace) -> TlsFiles | None:
    """The fleet's own CA and server certificate, when all three were given."""
    given = {
        flag: path
        for flag, path in (
            ("--ca-cert", args.ca_cert),
            ("--server-cert", args.server_cert),
            ("--server-key", args.server_key),
        )
        if path is not None
    }
    if not given:
        return None
    for flag, path in given.items():
        require_file(path, "file", option=flag)
    if len(given) != 3:
        raise UsageError(
            "a fleet's own TLS needs --ca-cert, --server-cert and --server-key together",
            hint="pass all three, or none (broker-config then makes a private CA)",
        )
    return TlsFiles(args.ca_cert.resolve(), args.server_cert.resolve(), args.server_key.resolve())


def _broker_config(args: argparse.Namespace) -> int:
    files = write_broker_config(
        BrokerPlan(
            folder=args.out,
            fleet=args.fleet,
            devices=tuple(args.device),
            port=args.port,
            bind=args.bind,
            hosts=tuple(args.host or ("localhost", "127.0.0.1")),
            run_as=args.run_as,
            tls=_own_tls(args),
        )
    )
    print(f"wrote {files.config} (start: mosquitto -c {files.config})")
    print(f"credentials in {files.credentials[OPERATOR].parent}/ (one NAME.password each)")
    print(f"devices trust {files.tls.ca_cert}")
    return 0


def _add_status_arguments(parser: argparse.ArgumentParser) -> None:
    add_broker_arguments(parser)
    parser.add_argument("--fleet", required=True, help="the fleet's name")
    parser.add_argument(
        "--wait",
        type=positive_seconds,
        default=10.0,
        metavar="SECONDS",
        help="longest to wait for the broker's retained states (default 10)",
    )
    add_json_argument(parser, help="print fleet-status JSON, no table")


def _status(args: argparse.Namespace) -> int:
    view = read_fleet(broker_settings(args), args.fleet, wait_s=args.wait)
    status = fleet_status(view)
    if args.json:
        sys.stdout.write(status.to_json())
    else:
        status.render()
    return 0


def _add_command_arguments(parser: argparse.ArgumentParser) -> None:
    add_broker_arguments(parser)
    parser.add_argument("--fleet", required=True, help="the fleet's name")
    parser.add_argument("device", metavar="DEVICE")
    parser.add_argument("action", choices=("update", "hold", "resume", "rollback"))
    parser.add_argument(
        "reference", nargs="?", metavar="REF", help="update: the OCI reference to install"
    )
    parser.add_argument("--version", dest="bundle_version", help="update: the bundle version")
    parser.add_argument(
        "--timeout",
        type=positive_seconds,
        default=30.0,
        metavar="SECONDS",
        help="longest to wait for the device's ack (default 30)",
    )
    add_json_argument(parser, help="print the ack as JSON")


def _command(args: argparse.Namespace) -> int:
    target = None
    if args.action == "update":
        if not args.reference or not args.bundle_version:
            raise UsageError(
                "update needs the reference to install and its bundle version",
                hint="trt-edge fleet command DEVICE update REGISTRY/REPO:TAG --version 2.0.0",
            )
        target = PullTarget(args.reference, args.bundle_version)
    elif args.reference or args.bundle_version:
        raise UsageError(f"{args.action} takes no reference or --version")
    command = LinkCommand(
        command_id=f"cli-{secrets.token_hex(6)}",
        action=args.action,
        issued_at=now(),
        target=target,
    )
    ack = send_command(
        broker_settings(args), args.fleet, args.device, command, timeout_s=args.timeout
    )
    if args.json:
        sys.stdout.write(ack.to_json().decode("utf-8") + "\n")
    else:
        where = f" (field {ack.field})" if ack.field else ""
        print(f"{args.device}: {ack.outcome}{where}: {ack.message}")
    return 0 if ack.outcome == "done" else 1


def _add_rollout_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "plan",
        metavar="PLAN.yaml",
        type=Path,
        help="the rollout plan (waves, "
        "failure_threshold, on_halt; its bundle is what the reference holds)",
    )
    add_broker_arguments(parser)
    parser.add_argument("--fleet", required=True, help="the fleet's name")
    parser.add_argument("--reference", required=True, help="the OCI reference devices install")
    parser.add_argument(
        "--version",
        dest="bundle_version",
        required=True,
        help="the bundle version that reference holds",
    )
    parser.add_argument(
        "--device",
        action="append",
        default=[],
        required=True,
        help="a device, in rollout order (repeat for each)",
    )
    parser.add_argument(
        "--no-health",
        action="store_true",
        help="pass a device on its version alone (its link runs without --health)",
    )
    parser.add_argument(
        "--wave-timeout",
        type=positive_seconds,
        default=900.0,
        metavar="SECONDS",
        help="longest a wave may take to report (default 900)",
    )
    add_json_argument(parser, help="print the JSON report, no table")


def _rollout(args: argparse.Namespace) -> int:
    plan = load_plan(args.plan)
    pull = PullPlan(
        target=PullTarget(args.reference, args.bundle_version),
        devices=tuple(args.device),
        waves=tuple(plan.waves),
        failure_threshold=plan.failure_threshold,
        on_halt=plan.on_halt,
        require_health=not args.no_health,
        wave_timeout_s=args.wave_timeout,
        metrics=plan.health.metrics,
    )

    def say(message: str) -> None:
        if not args.json:
            print(message, flush=True)

    with fleet_session(broker_settings(args), args.fleet) as session:
        report = run_pull_rollout(session, pull, say)
    if args.json:
        sys.stdout.write(report.to_json())
    else:
        report.render()
    return 0 if all(d.result == "updated" for d in report.devices) else 1


COMMAND = Command(
    "pull fleets over MQTT: broker set-up, fleet status, device commands",
    description="Pull fleets: devices connect out to an MQTT broker (trt-edge-device mqtt).",
    actions={
        "broker-config": Command(
            "write a mosquitto set-up: TLS, a password per device, per-device ACLs",
            run=_broker_config,
            add_arguments=_add_config_arguments,
        ),
        "status": Command(
            "show every device's state as the broker holds it",
            run=_status,
            add_arguments=_add_status_arguments,
        ),
        "rollout": Command(
            "roll a plan's waves out to pull devices: update, gate on their reports, halt",
            run=_rollout,
            add_arguments=_add_rollout_arguments,
        ),
        "command": Command(
            "send one device update REF, hold, resume or rollback and wait for its ack",
            run=_command,
            add_arguments=_add_command_arguments,
        ),
    },
)
