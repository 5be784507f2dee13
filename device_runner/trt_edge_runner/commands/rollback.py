"""`trt-edge-device rollback`: make the previous slot active again.

Check the previous slot's files against its bundle.json and its signature (the key
must not be revoked), then switch to it atomically; the slot being left becomes the
new rollback target. The version floor stays where it is.
"""

from __future__ import annotations

import argparse
import json

from trt_edge_runner.agent.config import add_location_arguments
from trt_edge_runner.agent.install import rollback
from trt_edge_runner.agent.store import DeviceStore
from trt_edge_runner.cli_args import add_json_argument
from trt_edge_runner.cli_shell import Command


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_json_argument(parser)
    add_location_arguments(parser)


def run(args: argparse.Namespace) -> int:
    state = rollback(DeviceStore(args.root), args.keys)
    info = state.info(state.active)
    left = state.info(state.previous)
    if args.json:
        doc = {
            "ok": True,
            "slot": state.active,
            "version": info.version if info else None,
            "left_version": left.version if left else None,
        }
        print(json.dumps(doc, sort_keys=True))
    else:
        name = f"{info.name} {info.version}" if info else "?"
        print(f"rolled back: slot {state.active} ({name}) is active again")
    return 0


COMMAND = Command("switch back to the previously active slot", add_arguments=add_arguments, run=run)
