"""`trt-edge fleet status`: the fleet as the broker holds it, as a table or one JSON document.

One row per device that ever reported: its bundle and slot, the last health check, when
its state was last published (`last_seen`) and whether its link is up (the broker's
retained presence; `unknown` when the device never connected with this link version).
`--json` prints `fleet-status.schema.json`; `decode_fleet_status` is its reader.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any

from trt_edge_runner.link.documents import HealthSummary
from trt_edge_runner.schemas import decode, source

from trt_edge.fleet.mqtt.operator_client import FleetView


@dataclass(frozen=True)
class DeviceRow:
    device: str
    online: bool | None
    name: str | None
    version: str | None
    slot: str | None
    previous_version: str | None
    health: HealthSummary | None
    last_seen: str | None
    hold: bool | None
    problems: tuple[str, ...] = ()


@dataclass(frozen=True)
class FleetStatus:
    fleet: str
    devices: tuple[DeviceRow, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": source.LINK_SCHEMA_VERSION,
            "fleet": self.fleet,
            "devices": [{**asdict(row), "problems": list(row.problems)} for row in self.devices],
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True, indent=2) + "\n"

    def render(self) -> None:
        """Print the table (rich)."""
        from rich.console import Console
        from rich.table import Table

        console = Console(highlight=False)
        table = Table(title=f"fleet {self.fleet}")
        for column in ("device", "online", "version", "slot", "health", "last seen", "notes"):
            table.add_column(column, overflow="fold")
        for row in self.devices:
            health = "-" if row.health is None else ("ok" if row.health.ok else "FAIL")
            notes = [*row.problems]
            if row.hold:
                notes.insert(0, "held")
            if row.health is not None and not row.health.ok:
                notes.append(row.health.reason)
            table.add_row(
                row.device,
                {True: "yes", False: "NO", None: "unknown"}[row.online],
                f"{row.name} {row.version}" if row.version else "-",
                row.slot or "-",
                health,
                row.last_seen or "-",
                "; ".join(notes),
            )
        console.print(table)
        online = sum(1 for row in self.devices if row.online)
        console.print(f"{len(self.devices)} device(s), {online} online")


def fleet_status(view: FleetView) -> FleetStatus:
    """The rows of `view`, by device name."""
    rows = []
    for name in sorted(view.devices):
        entry = view.devices[name]
        state = entry.state
        desired = (state.desired or {}) if state else {}
        rows.append(
            DeviceRow(
                device=name,
                online=entry.online,
                name=state.name if state else None,
                version=state.version if state else None,
                slot=state.slot if state else None,
                previous_version=state.previous_version if state else None,
                health=state.health if state else None,
                last_seen=state.at if state else None,
                hold=desired.get("hold") if state and state.desired is not None else None,
                problems=tuple(entry.problems)
                + ((state.agent_error,) if state and state.agent_error else ()),
            )
        )
    return FleetStatus(view.fleet, tuple(rows))


def _health(doc: dict[str, Any]) -> HealthSummary:
    return HealthSummary(doc["ok"], doc["version"], doc["reason"], doc["at"])


def decode_fleet_status(data: bytes | str, source_name: str) -> FleetStatus:
    """`fleet status --json` as a `FleetStatus`; DocumentError naming the field."""
    doc = decode("fleet-status", data, source_name)
    return FleetStatus(
        fleet=doc["fleet"],
        devices=tuple(
            DeviceRow(
                device=d["device"],
                online=d["online"],
                name=d["name"],
                version=d["version"],
                slot=d["slot"],
                previous_version=d["previous_version"],
                health=None if d["health"] is None else _health(d["health"]),
                last_seen=d["last_seen"],
                hold=d["hold"],
                problems=tuple(d["problems"]),
            )
            for d in doc["devices"]
        ),
    )
