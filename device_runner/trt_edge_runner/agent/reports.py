"""What `trt-edge-device status --json` prints, and the error document every `--json` device
command prints when it fails: the documents a fleet reads back from a device.

Each is a typed value with one writer (`to_dict`) and one decode function every reader
calls (`decode_status`, `decode_command_failure`): JSON, then the schema
(`device-status.schema.json`, `command-error.schema.json`), then the value. The fleet reads
devices of other versions, so the decode keeps only the fields this version knows.

Standard library only: this module ships to devices.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any

from trt_edge_runner.agent.store import Event, Floor, SlotInfo
from trt_edge_runner.schemas import decode


@dataclass(frozen=True)
class DeviceStatus:
    """`status --json`: the active and previous slots, what each holds, the version floors,
    the history, this device's facts and what recovery did on the way."""

    active: str | None
    previous: str | None
    version: str | None
    name: str | None
    slots: dict[str, SlotInfo | None]
    previous_version: str | None = None
    facts: dict[str, str | None] = field(default_factory=dict)
    recovered: tuple[str, ...] = ()
    floors: dict[str, Floor] = field(default_factory=dict)
    history: tuple[Event, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "active": self.active,
            "previous": self.previous,
            "version": self.version,
            "name": self.name,
            "previous_version": self.previous_version,
            "slots": {k: asdict(v) if v else None for k, v in self.slots.items()},
            "facts": dict(self.facts),
            "recovered": list(self.recovered),
            "floors": {name: asdict(f) for name, f in sorted(self.floors.items())},
            "history": [asdict(event) for event in self.history],
        }


def _known(cls: type, raw: dict[str, Any]) -> dict[str, Any]:
    """The keys of `raw` that `cls` (a dataclass) has: a newer device may report more."""
    names = {f.name for f in fields(cls)}
    return {k: v for k, v in raw.items() if k in names}


def decode_status(data: bytes | str, source: str) -> DeviceStatus:
    """`status --json` output as a `DeviceStatus`; DocumentError naming `source` and the
    field when it is not one."""
    doc = decode("device-status", data, source)
    return DeviceStatus(
        active=doc["active"],
        previous=doc["previous"],
        version=doc["version"],
        name=doc["name"],
        slots={
            k: None if v is None else SlotInfo(**_known(SlotInfo, v))
            for k, v in doc["slots"].items()
        },
        previous_version=doc.get("previous_version"),
        facts=dict(doc.get("facts", {})),
        recovered=tuple(doc.get("recovered", ())),
        floors={k: Floor(**_known(Floor, v)) for k, v in doc.get("floors", {}).items()},
        history=tuple(Event(**_known(Event, e)) for e in doc.get("history", ())),
    )


@dataclass(frozen=True)
class CommandFailure:
    """A device command that failed under `--json` (`TrtEdgeError.to_dict`): its one-line
    error, the error's type, the exit code and the hint."""

    error: str
    type: str
    exit_code: int
    hint: str | None = None
    where: dict[str, Any] | None = None


def decode_command_failure(data: bytes | str, source: str) -> CommandFailure:
    """A `--json` error document as a `CommandFailure`; DocumentError naming `source` and the
    field when it is not one."""
    doc = decode("command-error", data, source)
    return CommandFailure(
        error=doc["error"],
        type=doc["type"],
        exit_code=doc["exit_code"],
        hint=doc.get("hint"),
        where=doc.get("where"),
    )
