"""The documents that cross the broker, each a typed value with one writer and one decoder.

- a command (`link-command.schema.json`): operator → device, `decode_command`;
- an ack (`link-ack.schema.json`): device → operator, what became of one command;
- the state (`link-state.schema.json`, retained): what the device runs, how it is doing;
- the presence (`link-presence.schema.json`, retained; `false` is the link's will).

What a device is told is closed (a misspelt field is refused, naming it); what it reports
is open, since an operator reads devices of other versions. A command that does not decode
is never a crash: it is a `CommandRefused` that the link answers with a `refused` ack
naming the field.

Standard library only: this module ships to devices.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any, Literal

from trt_edge_runner.link.desired import PullTarget
from trt_edge_runner.schemas import DocumentError, decode, source

SCHEMA_VERSION = source.LINK_SCHEMA_VERSION
Action = Literal["update", "hold", "resume", "rollback"]
Outcome = Literal["done", "refused", "failed"]


class CommandRefused(DocumentError):
    """A command document the device will not act on; `command_id` when it could be read."""

    def __init__(self, message: str, *, field: str, command_id: str | None) -> None:
        super().__init__(message, field=field, schema="link-command")
        self.command_id = command_id


@dataclass(frozen=True)
class Command:
    """One rollout command to one device."""

    command_id: str
    action: Action
    issued_at: str
    target: PullTarget | None = None

    def to_dict(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "schema_version": SCHEMA_VERSION,
            "command_id": self.command_id,
            "action": self.action,
            "issued_at": self.issued_at,
        }
        if self.target is not None:
            doc["target"] = self.target.to_dict()
        return doc

    def to_json(self) -> bytes:
        return json.dumps(self.to_dict(), sort_keys=True).encode("utf-8")


def _readable_id(data: bytes | str) -> str | None:
    """The `command_id` of a document that may not decode, so its refusal can name it."""
    try:
        doc = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        return None
    value = doc.get("command_id") if isinstance(doc, dict) else None
    return value if isinstance(value, str) and value else None


def decode_command(data: bytes | str, source_name: str) -> Command:
    """A command document as a `Command`; CommandRefused naming the field (an `update`
    without a `target`, a `target` on any other action: the rule the schema cannot say)."""
    command_id = _readable_id(data)

    def refuse(message: str, field: str) -> CommandRefused:
        return CommandRefused(message, field=field, command_id=command_id)

    doc = decode("link-command", data, source_name, "command", refuse)
    target = doc.get("target")
    if doc["action"] == "update" and target is None:
        raise refuse(f"{source_name}: target: missing (an update names what to install)", "target")
    if doc["action"] != "update" and target is not None:
        raise refuse(
            f"{source_name}: target: only an update names a target, not a {doc['action']}",
            "target",
        )
    return Command(
        command_id=doc["command_id"],
        action=doc["action"],
        issued_at=doc["issued_at"],
        target=None if target is None else PullTarget(target["reference"], target["version"]),
    )


@dataclass(frozen=True)
class Ack:
    """What became of one command: `done`, `refused` (the document; `field` names what) or
    `failed` (the device could not do it: a rollback with nothing to go back to)."""

    device: str
    command_id: str | None
    outcome: Outcome
    message: str
    at: str
    field: str | None = None
    action: str | None = None

    def to_json(self) -> bytes:
        doc = {
            "schema_version": SCHEMA_VERSION,
            "device": self.device,
            "command_id": self.command_id,
            "outcome": self.outcome,
            "message": self.message,
            "at": self.at,
            "field": self.field,
            "action": self.action,
        }
        return json.dumps(doc, sort_keys=True).encode("utf-8")


def decode_ack(data: bytes | str, source_name: str) -> Ack:
    """An ack as an `Ack`; DocumentError naming `source_name` and the field."""
    doc = decode("link-ack", data, source_name)
    return Ack(
        device=doc["device"],
        command_id=doc["command_id"],
        outcome=doc["outcome"],
        message=doc["message"],
        at=doc["at"],
        field=doc.get("field"),
        action=doc.get("action"),
    )


@dataclass(frozen=True)
class HealthSummary:
    """The last health check the link ran: on which version, passed or why not."""

    ok: bool
    version: str | None
    reason: str
    at: str


@dataclass(frozen=True)
class DeviceState:
    """A device's retained state: the active bundle, the rollback target's version, the
    last health result, the serve metrics the health gate reads (Prometheus text of the
    gate's families, or why they could not be scraped), what it was told."""

    device: str
    name: str | None
    version: str | None
    slot: str | None
    previous_version: str | None
    at: str
    health: HealthSummary | None = None
    metrics: str | None = None
    metrics_error: str | None = None
    desired: dict[str, Any] | None = None
    agent_error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "device": self.device,
            "name": self.name,
            "version": self.version,
            "slot": self.slot,
            "previous_version": self.previous_version,
            "at": self.at,
            "health": None if self.health is None else asdict(self.health),
            "metrics": self.metrics,
            "metrics_error": self.metrics_error,
            "desired": self.desired,
            "agent_error": self.agent_error,
        }

    def to_json(self) -> bytes:
        return json.dumps(self.to_dict(), sort_keys=True).encode("utf-8")

    def same_facts(self, other: DeviceState | None) -> bool:
        """Whether `other` says the same as this one, apart from when it was gathered."""
        if other is None:
            return False
        mine, theirs = self.to_dict(), other.to_dict()
        mine.pop("at"), theirs.pop("at")
        return mine == theirs


def decode_device_state(data: bytes | str, source_name: str) -> DeviceState:
    """A retained state as a `DeviceState`; DocumentError naming `source_name` and the field."""
    doc = decode("link-state", data, source_name)
    health = doc.get("health")
    return DeviceState(
        device=doc["device"],
        name=doc["name"],
        version=doc["version"],
        slot=doc["slot"],
        previous_version=doc["previous_version"],
        at=doc["at"],
        health=None
        if health is None
        else HealthSummary(health["ok"], health["version"], health["reason"], health["at"]),
        metrics=doc.get("metrics"),
        metrics_error=doc.get("metrics_error"),
        desired=doc.get("desired"),
        agent_error=doc.get("agent_error"),
    )


def presence_json(online: bool) -> bytes:
    return json.dumps({"schema_version": SCHEMA_VERSION, "online": online}).encode("utf-8")


def decode_presence(data: bytes | str, source_name: str) -> bool:
    """Whether a presence document says the link is connected; DocumentError otherwise."""
    return bool(decode("link-presence", data, source_name)["online"])
