"""`trt-edge-device status [--json]`: what is active, what rollback would restore.

Show which bundle is active, which one `rollback` would restore, each model's
version floor (anti-rollback), the latest history and this device's facts. Also
finishes the recovery of an interrupted install.
"""

from __future__ import annotations

import argparse
import json

from trt_edge_runner.agent.config import add_location_arguments
from trt_edge_runner.agent.facts import load_facts
from trt_edge_runner.agent.reports import DeviceStatus
from trt_edge_runner.agent.store import AgentState, DeviceStore
from trt_edge_runner.cli_args import add_json_argument
from trt_edge_runner.cli_shell import Command


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_json_argument(parser)
    add_location_arguments(parser)


def run(args: argparse.Namespace) -> int:
    store = DeviceStore(args.root)
    recovered: list[str] = []
    if store.exists():
        with store.locked():
            recovered = store.recover()
            state = store.load()
    else:  # nothing was ever installed: report that, create nothing
        state = AgentState()
    facts = load_facts(args.facts)
    active = state.info(state.active)
    previous = state.info(state.previous)
    if args.json:
        doc = DeviceStatus(
            active=state.active,
            previous=state.previous,
            version=active.version if active else None,
            name=active.name if active else None,
            previous_version=previous.version if previous else None,
            slots=dict(state.slots),
            facts=facts,
            recovered=tuple(recovered),
            floors=dict(state.floors),
            history=state.history,
        ).to_dict()
        print(json.dumps(doc, sort_keys=True))
        return 0
    for action in recovered:
        print(f"recovered: {action}")
    if active is None:
        print("active:   none (nothing installed)")
    else:
        print(f"active:   slot {state.active}: {active.name} {active.version}")
        print(f"          installed {active.installed_at}, baseline {active.baseline_ms}")
        if active.baseline_spread_ms:  # none in a state written before spreads were kept
            print(
                f"          baseline spread (median absolute deviation) {active.baseline_spread_ms}"
            )
    if previous is None:
        print("previous: none (rollback unavailable)")
    else:
        print(f"previous: slot {state.previous}: {previous.name} {previous.version}")
    for name, floor in sorted(state.floors.items()):
        print(f"floor:    {name} {floor.version} (lower versions need --allow-downgrade)")
    for event in state.history[-5:]:
        what = f"{event.name} {event.version}: " if event.name else ""
        print(f"history:  {event.at} {event.action} {what}{event.detail}")
    print("facts:    " + ", ".join(f"{k}={v}" for k, v in facts.items()))
    return 0


COMMAND = Command(
    "show the active and previous slots (and recover after a crash)",
    add_arguments=add_arguments,
    run=run,
)
