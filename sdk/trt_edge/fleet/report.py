"""The rollout report: one row per device (old/new version, result, timings, reason), as a
table for people and JSON for machines; and the per-device reports it is made from.

Each device writes one JSON report per playbook run back to the controller
(`fleet/playbook.py`): `DeviceReport` (a wave: status, trust, install, health),
`RollbackReport`, `MetricsReport` (the live-traffic gate). Their schemas are
`fleet-*-report.schema.json` (trt_edge_runner/schemas); `decode_device_report`,
`decode_rollback_report` and `decode_metrics_report` are their one reader each. Ansible gives
a rendered value its native type or leaves it a string, by version, so the decode is where
`"True"` and `true` both become True and `"0"` becomes 0.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from trt_edge_runner.errors import EXIT_FAILED
from trt_edge_runner.schemas import decode
from trt_edge_runner.schemas.source import SCHEMAS

from trt_edge.fleet.errors import RolloutError

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


def _report_error(message: str, field: str) -> RolloutError:
    """A device's report that is not one: the device failed, the rollout goes on (exit 1)."""
    return RolloutError(message, exit_code=EXIT_FAILED)


def _flag(value: bool | str) -> bool:
    return value if isinstance(value, bool) else value.lower() == "true"


def _whole(value: int | str | None) -> int | None:
    return None if value is None else int(value)


def _seconds(value: float | str | None) -> float | None:
    return None if value is None else float(value)


@dataclass(frozen=True)
class DeviceReport:
    """What one device reported of a wave (`playbook.REPORT_VARS`). `before`, `after` and
    `*_stdout` are the device commands' own `--json` output, read by their own decoders."""

    host: str
    stage: str
    failed: bool
    failed_task: str = ""
    failed_msg: str = ""
    before: str = ""
    trust_stdout: str = ""
    trust_stderr: str = ""
    install_stdout: str = ""
    install_stderr: str = ""
    install_delta: str = ""
    health_stdout: str = ""
    health_stderr: str = ""
    health_delta: str = ""
    rollback_rc: int | None = None
    rollback_stderr: str = ""
    after: str = ""
    t0: float | None = None
    t1: float | None = None


# The report's optional text fields, as its schema declares them: one list, in the schema.
_SCHEMA = SCHEMAS["fleet-device-report"]
_REPORT_TEXT = tuple(
    key
    for key, spec in _SCHEMA["properties"].items()
    if spec == {"type": "string"} and key not in _SCHEMA["required"]
)


def decode_device_report(data: bytes | str, source: str) -> DeviceReport:
    """A wave's `<host>.json` as a `DeviceReport`; RolloutError (exit 1) naming `source` and the
    field when it is not one."""
    doc = decode("fleet-device-report", data, source, "device report", _report_error)
    return DeviceReport(
        host=doc["host"],
        stage=doc["stage"],
        failed=_flag(doc["failed"]),
        **{key: doc.get(key, "") for key in _REPORT_TEXT},
        rollback_rc=_whole(doc.get("rollback_rc")),
        t0=_seconds(doc.get("t0")),
        t1=_seconds(doc.get("t1")),
    )


@dataclass(frozen=True)
class RollbackReport:
    """What one device reported of a rollback run: the command's exit code, its error output,
    and `status --json` after it."""

    host: str
    rollback_rc: int
    rollback_stderr: str = ""
    after: str = ""


def decode_rollback_report(data: bytes | str, source: str) -> RollbackReport:
    """A rollback run's `<host>.json` as a `RollbackReport`; RolloutError (exit 1) naming
    `source` and the field when it is not one."""
    doc = decode("fleet-rollback-report", data, source, "rollback report", _report_error)
    return RollbackReport(
        host=doc["host"],
        rollback_rc=int(doc["rollback_rc"]),
        rollback_stderr=doc.get("rollback_stderr", ""),
        after=doc.get("after", ""),
    )


@dataclass(frozen=True)
class MetricsReport:
    """What one device reported of the live-traffic gate: the URL scraped, and per scrape
    (start, end of the window) the HTTP status, the text and the error."""

    host: str
    url: str
    status: tuple[int, int]
    metrics: tuple[str, str] = ("", "")
    error: tuple[str, str] = ("", "")


def decode_metrics_report(data: bytes | str, source: str) -> MetricsReport:
    """A live-traffic gate's `<host>.json` as a `MetricsReport`; RolloutError (exit 1) naming
    `source` and the field when it is not one."""
    doc = decode("fleet-metrics-report", data, source, "metrics report", _report_error)
    return MetricsReport(
        host=doc["host"],
        url=doc["url"],
        status=(int(doc["status_0"]), int(doc["status_1"])),
        metrics=(doc.get("metrics_0", ""), doc.get("metrics_1", "")),
        error=(doc.get("error_0", ""), doc.get("error_1", "")),
    )
