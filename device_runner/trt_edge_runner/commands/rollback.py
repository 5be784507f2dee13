"""`trt-edge-device rollback`: make the previous slot active again."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from trt_edge_runner.agent.config import add_location_arguments


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "rollback",
        help="switch back to the previously active slot",
        description=(
            "Check the previous slot's files against its bundle.json and switch to it "
            "atomically; the slot being left becomes the new rollback target."
        ),
    )
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    add_location_arguments(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from trt_edge_runner.agent.errors import AgentError
    from trt_edge_runner.agent.install import rollback
    from trt_edge_runner.agent.store import DeviceStore

    try:
        state = rollback(DeviceStore(args.root))
    except AgentError as exc:
        if args.json:
            print(json.dumps({"ok": False, "error": str(exc)}))
        print(f"trt-edge-device rollback: {exc}", file=sys.stderr)
        return exc.exit_code
    info = state.info(state.active)
    left = state.info(state.previous)
    if args.json:
        print(
            json.dumps(
                {
                    "ok": True,
                    "slot": state.active,
                    "version": info.version if info else None,
                    "left_version": left.version if left else None,
                },
                sort_keys=True,
            )
        )
    else:
        name = f"{info.name} {info.version}" if info else "?"
        print(f"rolled back: slot {state.active} ({name}) is active again")
    return 0
