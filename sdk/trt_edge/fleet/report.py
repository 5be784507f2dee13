"""The rollout report: one row per device (old/new version, result, timings, reason), as a
table for people and JSON for machines."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

RESULTS = ("updated", "rolled_back", "failed", "unreachable", "skipped", "not_attempted", "planned")


@dataclass
class DeviceResult:
    host: str
    result: str
    wave: int | None = None
    old_version: str | None = None
    new_version: str | None = None
    reason: str = ""
    seconds: float | None = None
    install_seconds: float | None = None
    health_seconds: float | None = None
    # The live-traffic gate's figures over its window (health.metrics): requests, errors,
    # error_rate, ttft_p95_ms, restarts, serving; None when the gate did not run.
    metrics: dict[str, Any] | None = None


@dataclass
class RolloutReport:
    bundle: str
    name: str
    version: str
    target: dict[str, Any]
    dry_run: bool
    waves: list[list[str]] = field(default_factory=list)
    waves_run: int = 0
    halted: bool = False
    halt_reason: str = ""
    devices: list[DeviceResult] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        out = dict.fromkeys(RESULTS, 0)
        for device in self.devices:
            out[device.result] = out.get(device.result, 0) + 1
        return {k: v for k, v in out.items() if v}

    def to_dict(self) -> dict[str, Any]:
        doc = asdict(self)
        doc["counts"] = self.counts()
        return doc

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=True) + "\n"

    def render(self) -> None:
        """Print the table (rich) and the summary line."""
        from rich.console import Console
        from rich.table import Table

        console = Console(highlight=False)
        title = f"rollout {self.name} {self.version}" + (" (dry run)" if self.dry_run else "")
        table = Table(title=title)
        for column in ("device", "wave", "result", "old", "new", "time s", "reason"):
            table.add_column(column, overflow="fold")
        for d in self.devices:
            table.add_row(
                d.host,
                "" if d.wave is None else str(d.wave),
                d.result,
                d.old_version or "-",
                d.new_version or "-",
                "" if d.seconds is None else f"{d.seconds:.1f}",
                d.reason,
            )
        console.print(table)
        summary = ", ".join(f"{n} {k}" for k, n in self.counts().items())
        console.print(f"waves run: {self.waves_run}/{len(self.waves)}; {summary}")
        if self.halted:
            console.print(f"HALTED: {self.halt_reason}")
