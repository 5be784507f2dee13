"""`trt-edge-device mqtt --broker HOST[:PORT] --fleet F --device D`: the pull fleet's link.

Connect out to an MQTT broker (TLS with `--ca-file`; `--username` and `--password-file`, or a
client certificate) and keep it told of this device: its state, retained on
`trt-edge/F/D/state` (active version and slot, the rollback target, the last health check,
the serve metrics the fleet's gate reads from `--metrics-url`), and its presence on
`trt-edge/F/D/online` (the broker says `false` when the link vanishes). Take rollout
commands on `trt-edge/F/D/command` — update, hold, resume (written to ROOT/desired.json,
which `trt-edge-device follow` reads), rollback (the agent's rollback) — and answer each on
`trt-edge/F/D/ack`. A command that does not decode is refused, naming the field. Runs until
SIGTERM or Ctrl-C, reconnecting with backoff. Needs the `mqtt` extra
(`pip install 'trt-edge-runner[mqtt]'`).
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
from types import FrameType

from trt_edge_runner.agent.config import (
    add_location_arguments,
    add_runner_arguments,
    load_health_settings,
)
from trt_edge_runner.agent.health import check_health
from trt_edge_runner.agent.smoke import open_executor
from trt_edge_runner.agent.store import DeviceStore
from trt_edge_runner.cli_args import positive_seconds
from trt_edge_runner.cli_shell import Command
from trt_edge_runner.errors import TrtEdgeError, Where
from trt_edge_runner.link.broker import add_broker_arguments, broker_settings
from trt_edge_runner.link.documents import HealthSummary
from trt_edge_runner.link.errors import LinkConfigError
from trt_edge_runner.link.session import HealthCheck, LinkSettings, run_link
from trt_edge_runner.link.state import now
from trt_edge_runner.link.topics import bad_name


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_broker_arguments(parser)
    parser.add_argument("--fleet", required=True, help="the fleet's name (a topic level)")
    parser.add_argument("--device", required=True, help="this device's name (a topic level)")
    parser.add_argument(
        "--metrics-url",
        default=None,
        help="the local service's /metrics (e.g. http://127.0.0.1:8000/metrics); "
        "default: report no serve metrics",
    )
    parser.add_argument(
        "--every",
        type=positive_seconds,
        default=30.0,
        metavar="SECONDS",
        help="publish the state at least this often (and on every change); default 30",
    )
    parser.add_argument(
        "--health",
        action="store_true",
        help="run the agent's health check whenever the active version changes, and report it",
    )
    add_location_arguments(parser)
    add_runner_arguments(parser, default_executor="cpp")


def _health_check(args: argparse.Namespace) -> HealthCheck:
    """The agent's health check (`trt-edge-device health`), summed up for the state."""
    settings = load_health_settings(args.config)

    def check() -> HealthSummary:
        try:
            report = check_health(
                DeviceStore(args.root), settings, lambda: open_executor(args, probe=False)
            )
        except TrtEdgeError as exc:  # nothing installed, no runner: reported, not fatal
            return HealthSummary(False, None, str(exc), now())
        return HealthSummary(report.ok, report.version, report.reason, now())

    return check


def run(args: argparse.Namespace) -> int:
    for option, name in (("--fleet", args.fleet), ("--device", args.device)):
        problem = bad_name(name)
        if problem is not None:
            raise LinkConfigError(problem, where=Where(option=option, value=name))
    broker = broker_settings(args)
    logging.basicConfig(
        level=logging.INFO, stream=sys.stderr, format="trt-edge-device mqtt: %(message)s"
    )
    stop = threading.Event()

    def stop_on(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, stop_on)
    signal.signal(signal.SIGINT, stop_on)
    settings = LinkSettings(
        fleet=args.fleet,
        device=args.device,
        root=args.root,
        keys=args.keys,
        metrics_url=args.metrics_url,
        every_s=args.every,
    )
    run_link(settings, broker, stop, _health_check(args) if args.health else None)
    return 0


COMMAND = Command(
    "report to and take commands from a pull fleet's MQTT broker",
    add_arguments=add_arguments,
    run=run,
)
