"""`trt-edge-device follow REGISTRY/REPO:CHANNEL`: keep this device on a channel's bundle.

Poll the channel's tag in an OCI registry (with jitter, and exponential backoff after
failures); when it points at a bundle this device does not run, verify its signature and
version against this device's trust and floor as `install` does, fetch only the blobs the
device's store lacks (resumable, size- and digest-checked, within --disk-budget-mib), and
install it through the same A/B transaction as `install` (a running `serve` hot-swaps to
it). `--once` polls once and exits (0: installed or up to date). The follower's record is
ROOT/follow/state.json. Needs `trt-edge-runner[follow]` (the ORAS client).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from trt_edge_runner.agent.config import (
    add_location_arguments,
    add_runner_arguments,
    load_health_settings,
)
from trt_edge_runner.agent.errors import AgentConfigError
from trt_edge_runner.agent.facts import load_facts
from trt_edge_runner.agent.health import check_health
from trt_edge_runner.agent.install import InstallResult, install_bundle
from trt_edge_runner.agent.memory_check import MemoryCheck
from trt_edge_runner.agent.smoke import open_executor
from trt_edge_runner.agent.store import DeviceStore
from trt_edge_runner.cli_args import add_json_argument, at_least
from trt_edge_runner.cli_shell import Command
from trt_edge_runner.commands.install import add_memory_arguments
from trt_edge_runner.follow.access import access_from, add_registry_arguments
from trt_edge_runner.follow.blob_store import MIB, Budget
from trt_edge_runner.follow.follower import Follower, Schedule, follow_loop
from trt_edge_runner.follow.reference import parse_reference
from trt_edge_runner.follow.registry import RegistryClient


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("reference", metavar="REGISTRY/REPO:CHANNEL")
    parser.add_argument("--once", action="store_true", help="poll once and exit")
    parser.add_argument(
        "--interval-s", type=at_least(1), default=300, help="seconds between polls (default 300)"
    )
    parser.add_argument(
        "--max-backoff-s",
        type=at_least(1),
        default=3600,
        help="longest wait after failed polls (default 3600)",
    )
    parser.add_argument(
        "--max-polls", type=at_least(1), default=None, help="stop after this many polls"
    )
    parser.add_argument(
        "--disk-budget-mib",
        type=at_least(1),
        default=None,
        help="most MiB the blob store may hold (default: no cap beyond the free space)",
    )
    parser.add_argument(
        "--disk-reserve-mib",
        type=at_least(0),
        default=64,
        help="MiB of the file system's free space a download never takes (default 64)",
    )
    parser.add_argument(
        "--max-rate-kib",
        type=at_least(1),
        default=None,
        help="download at most this many KiB/s (metered links; default: unthrottled)",
    )
    add_registry_arguments(parser)
    parser.add_argument(
        "--smoke-runs", type=at_least(1), default=3, help="timed runs per phase (at least 1)"
    )
    parser.add_argument(
        "--health-check",
        action="store_true",
        help="run the health check after each install; a bundle that fails it is rolled back "
        "and refused until the tag moves (a device following a channel alone; in a staged "
        "rollout the rollout's gate judges the link's report instead)",
    )
    add_json_argument(parser)
    add_memory_arguments(parser)
    add_location_arguments(parser)
    add_runner_arguments(parser, default_executor="cpp")


def run(args: argparse.Namespace) -> int:
    def say(message: str) -> None:
        if not args.json:
            print(message, flush=True)

    reference = parse_reference(args.reference, "REGISTRY/REPO:CHANNEL")
    health_settings = load_health_settings(args.config)
    facts = load_facts(args.facts)
    executor = open_executor(args)
    store = DeviceStore(args.root)
    memory = MemoryCheck(args.meminfo, args.memory_headroom_mib, args.ignore_memory_check)

    def install(bundle: Path) -> InstallResult:
        return install_bundle(
            store,
            bundle,
            args.keys,
            facts,
            smoke_runs=args.smoke_runs,
            executor=executor,
            progress=say,
            memory=memory,
        )

    follower = Follower(
        client=RegistryClient(reference, access_from(args)),
        agent=store,
        keys_dir=args.keys,
        install=install,
        budget=Budget(
            args.disk_budget_mib * MIB if args.disk_budget_mib else None,
            args.disk_reserve_mib * MIB,
        ),
        max_rate=args.max_rate_kib * 1024 if args.max_rate_kib else None,
        health=(lambda: check_health(store, health_settings, lambda: executor))
        if args.health_check
        else None,
    )
    if args.once:
        state = follower.poll(say)
    else:
        schedule = Schedule(interval_s=args.interval_s, max_backoff_s=args.max_backoff_s)
        last = follow_loop(follower, schedule, max_polls=args.max_polls, say=say)
        if last is None:  # pragma: no cover - a poll always records its state
            raise AgentConfigError(f"{follower.state_path}: no follower state was written")
        state = last
    if args.json:
        print(state.to_json().decode(), end="")
    else:
        say(f"{state.outcome}: {state.detail} ({state.bytes_fetched} bytes fetched)")
    return 0 if state.outcome in ("installed", "up_to_date", "held") else 1


COMMAND = Command(
    "follow a registry channel: fetch, verify and install what it points at",
    add_arguments=add_arguments,
    run=run,
)
