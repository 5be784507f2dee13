"""What each command does on the device, and the ack that says what became of it.

- `update`: `desired.json` gets the target (and `hold: false`): the follower installs it;
- `hold` / `resume`: `desired.json`'s `hold` (install nothing new / follow again);
- `rollback`: the agent's own rollback (`agent.install.rollback`, the code path of
  `trt-edge-device rollback`), then `hold: true` without a target, so the follower does
  not take the candidate straight back; the next update or resume lifts it.

A command is applied at most once: MQTT's QoS 1 may deliver it twice, and a rollback
applied twice would switch back to the bundle it left. The last command's id is kept in
`desired.json`; the same id again is acknowledged `done` without acting.

Standard library only: this module ships to devices.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from trt_edge_runner.agent.install import rollback
from trt_edge_runner.agent.store import DeviceStore
from trt_edge_runner.errors import TrtEdgeError
from trt_edge_runner.link.desired import Desired, read_desired, write_desired
from trt_edge_runner.link.documents import Ack, Command, CommandRefused, Outcome, decode_command
from trt_edge_runner.link.state import now


def _next_desired(current: Desired, command: Command) -> Desired:
    said = replace(current, command_id=command.command_id, issued_at=command.issued_at)
    if command.action == "update":
        return replace(said, hold=False, target=command.target)
    if command.action == "hold":
        return replace(said, hold=True)
    if command.action == "resume":
        return replace(said, hold=False)
    return replace(said, hold=True, target=None)  # rollback


def apply_command(command: Command, *, device: str, store: DeviceStore, keys: Path) -> Ack:
    """Do what `command` says; the ack says done or failed (never raises for the device's
    own failures: a rollback with nothing to go back to is a `failed` ack)."""

    def ack(outcome: Outcome, message: str) -> Ack:
        return Ack(device, command.command_id, outcome, message, now(), action=command.action)

    try:
        current = read_desired(store.root)
        if command.command_id == current.command_id:
            return ack("done", f"command {command.command_id} was already applied")
        message = f"{command.action} written to desired.json"
        if command.action == "rollback":
            state = rollback(store, keys)
            info = state.info(state.active)
            back = f"{info.name} {info.version}" if info else "nothing"
            message = f"rolled back: slot {state.active} ({back}) is active; holding"
        write_desired(store.root, _next_desired(current, command))
    except TrtEdgeError as exc:
        return ack("failed", str(exc))
    except OSError as exc:
        return ack("failed", f"{store.root}: {exc.strerror or exc}")
    return ack("done", message)


def handle_payload(
    payload: bytes, *, device: str, store: DeviceStore, keys: Path, topic: str
) -> Ack:
    """A command as it came off the broker, decoded and applied; a document that does not
    decode is a `refused` ack naming the field."""
    try:
        command = decode_command(payload, topic)
    except CommandRefused as exc:
        return Ack(device, exc.command_id, "refused", str(exc), now(), field=exc.field)
    return apply_command(command, device=device, store=store, keys=keys)
