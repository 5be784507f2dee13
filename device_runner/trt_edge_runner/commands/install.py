"""`trt-edge-device install BUNDLE.tar`: verified, A/B, crash-safe install of a signed bundle.

Verify BUNDLE.tar's signature against the trusted keys, check its target against
this device, its recorded memory needs against the device's memory (MemTotal less
--memory-headroom-mib; --ignore-memory-check to install anyway) and its version
against the model's floor (anti-rollback: never below the highest version installed,
unless --allow-downgrade), extract it safely into the inactive A/B slot, smoke-run
every phase (in the C++ runner trt-edge-run, a child
process: a crash there refuses the install), then switch atomically. The previous
slot is kept for `rollback`.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from trt_edge_runner.agent.config import (
    DEFAULT_LATENCY_RUNS,
    add_location_arguments,
    add_runner_arguments,
    load_health_settings,
)
from trt_edge_runner.agent.facts import load_facts
from trt_edge_runner.agent.install import install_bundle
from trt_edge_runner.agent.memory_check import MemoryCheck
from trt_edge_runner.agent.smoke import open_executor
from trt_edge_runner.agent.store import DeviceStore
from trt_edge_runner.cli_args import add_json_argument, at_least, require_file
from trt_edge_runner.cli_shell import Command
from trt_edge_runner.memory_budget import DEFAULT_HEADROOM_MIB, MEMINFO


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("bundle_tar", metavar="BUNDLE.tar", type=Path)
    add_json_argument(parser)
    parser.add_argument(
        "--smoke-runs",
        type=at_least(1),
        default=DEFAULT_LATENCY_RUNS,
        help="timed runs per phase; their median and spread are the health baseline "
        f"(default {DEFAULT_LATENCY_RUNS})",
    )
    parser.add_argument(
        "--allow-downgrade",
        action="store_true",
        help="install even if this model's version is below the device's floor (or is the "
        "floor version with other content); recorded in the device's history",
    )
    add_memory_arguments(parser)
    add_location_arguments(parser)
    add_runner_arguments(parser, default_executor="cpp")


def add_memory_arguments(parser: argparse.ArgumentParser) -> None:
    """The memory check's options (`trt_edge_runner.agent.memory_check`)."""
    parser.add_argument(
        "--memory-headroom-mib",
        type=at_least(0),
        default=DEFAULT_HEADROOM_MIB,
        help="MiB of the device's memory kept free for the OS, the agent and the CUDA/TensorRT "
        f"libraries (default {DEFAULT_HEADROOM_MIB})",
    )
    parser.add_argument(
        "--ignore-memory-check",
        action="store_true",
        help="install even if the bundle's recorded memory needs exceed this device's memory "
        "less the headroom",
    )
    parser.add_argument(
        "--meminfo",
        type=Path,
        default=MEMINFO,
        help=f"read the device's memory from this file (default {MEMINFO})",
    )


def run(args: argparse.Namespace) -> int:
    def say(message: str) -> None:
        if not args.json:
            print(message)

    require_file(args.bundle_tar, "bundle archive (.tar)")
    load_health_settings(args.config)  # a broken device.json is reported now, not at health
    facts = load_facts(args.facts)
    executor = open_executor(args)  # a missing or broken runner is refused before anything changes
    result = install_bundle(
        DeviceStore(args.root),
        args.bundle_tar,
        args.keys,
        facts,
        smoke_runs=args.smoke_runs,
        executor=executor,
        allow_downgrade=args.allow_downgrade,
        progress=say,
        memory=MemoryCheck(args.meminfo, args.memory_headroom_mib, args.ignore_memory_check),
    )
    previous = result.previous
    if args.json:
        doc = {
            "ok": True,
            "slot": result.slot,
            "name": result.name,
            "version": result.version,
            "previous_version": previous.version if previous else None,
            "baseline_ms": result.baseline_ms,
            "baseline_spread_ms": result.baseline_spread_ms,
            "recovered": result.recovered,
            "floor": result.floor,
            "downgrade": result.downgrade,
        }
        print(json.dumps(doc, sort_keys=True))
    else:
        for action in result.recovered:
            print(f"recovered: {action}")
        was = f" (was {previous.name} {previous.version})" if previous else ""
        print(f"installed {result.name} {result.version} into slot {result.slot}, active{was}")
    return 0


COMMAND = Command(
    "install a signed bundle .tar into the inactive slot and switch to it",
    add_arguments=add_arguments,
    run=run,
)
