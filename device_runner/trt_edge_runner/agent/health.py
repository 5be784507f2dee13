"""`health`: run every phase of the active bundle and compare with the install baseline.

A device fails its gate when a phase does not run, when it is slower than its
baseline by more than `max_latency_regression` (a fraction: 0.5 = 50 % slower),
or when it exceeds the device's absolute `latency_budget_ms`. Both limits are
device settings (`device.json`), or given on the command line by a rollout; a
slowdown within `latency_noise_ms` of the baseline is never a regression (timer
and scheduler noise, see `agent/config.py`).
"Does not run" includes the runner refusing the bundle, and the runner dying of
a signal or overrunning its time limit (`RunnerCrashed`: named with the stage it
died in): the model is what failed, so the gate fails, it is not an agent error.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from trt_edge_runner.agent.config import HealthSettings
from trt_edge_runner.agent.errors import AgentConfigError, NothingInstalled
from trt_edge_runner.agent.reports import CommandFailure, decode_command_failure
from trt_edge_runner.agent.smoke import PhaseEngine, run_every_phase
from trt_edge_runner.agent.store import DeviceStore
from trt_edge_runner.json_documents import parse_json_object
from trt_edge_runner.schemas import DocumentError, validate


@dataclass
class PhaseHealth:
    phase: str
    ok: bool
    latency_ms: float | None
    baseline_ms: float | None
    reason: str = ""


@dataclass
class HealthReport:
    ok: bool
    slot: str
    name: str
    version: str
    settings: dict[str, Any]
    phases: list[PhaseHealth] = field(default_factory=list)
    reason: str = ""
    engine: str = ""  # what ran the phases: cpp (trt-edge-run) or python

    def to_dict(self) -> dict[str, Any]:
        """`health --json`: held to `device-health.schema.json` (`decode_health` reads it)."""
        return asdict(self)


def decode_health(data: bytes | str, source: str) -> HealthReport | CommandFailure:
    """`health --json` output: the report, or the error document the command printed when it
    could not judge (nothing installed, no runner: `CommandFailure`). The one reader of the
    document; DocumentError naming `source` and the field when it is neither."""
    doc = parse_json_object(
        data, source, "", lambda m: DocumentError(m, field="", schema="device-health")
    )
    if doc.get("ok") is False and "error" in doc:
        return decode_command_failure(data, source)
    validate("device-health", doc, source)
    settings = doc["settings"]
    return HealthReport(
        ok=doc["ok"],
        slot=doc["slot"],
        name=doc["name"],
        version=doc["version"],
        settings={
            "max_latency_regression": settings["max_latency_regression"],
            "latency_budget_ms": settings["latency_budget_ms"],
            "latency_noise_ms": settings["latency_noise_ms"],
        },
        phases=[
            PhaseHealth(
                phase=p["phase"],
                ok=p["ok"],
                latency_ms=p["latency_ms"],
                baseline_ms=p["baseline_ms"],
                reason=p.get("reason", ""),
            )
            for p in doc["phases"]
        ],
        reason=doc.get("reason", ""),
        engine=doc.get("engine", ""),
    )


def check_health(
    store: DeviceStore,
    settings: HealthSettings,
    open_engine: Callable[[], PhaseEngine],
    runs: int = 3,
) -> HealthReport:
    """Run the active bundle's phases and judge them; NothingInstalled when there is none.

    `open_engine` is called once something is known to be installed (so "nothing is
    installed" is reported as such on a device without a runner too); a missing or
    broken runner is then an error of its own, not a failed gate.
    """
    state = store.load()
    info = state.info(state.active)
    if state.active is None or info is None:
        raise NothingInstalled(
            f"{store.root}: no bundle is installed on this device; nothing to check"
        )
    engine = open_engine()
    report = HealthReport(
        ok=True,
        slot=state.active,
        name=info.name,
        version=info.version,
        settings=asdict(settings),
        engine=engine.name,
    )
    try:
        timings = run_every_phase(store.slot_dir(state.active), engine, runs=runs)
    except AgentConfigError:  # a missing or broken runner: the device's setup, not the model
        raise
    except Exception as exc:  # a model that no longer runs is the failure health reports
        report.ok = False
        report.reason = f"running {info.name} {info.version} failed: {exc}"
        return report
    for timing in timings:
        baseline = info.baseline_ms.get(timing.phase)
        phase = PhaseHealth(timing.phase, True, round(timing.median_ms, 4), baseline)
        if settings.latency_budget_ms is not None and timing.median_ms > settings.latency_budget_ms:
            phase.ok = False
            phase.reason = (
                f"{timing.median_ms:.3f} ms exceeds this device's latency budget "
                f"{settings.latency_budget_ms:g} ms"
            )
        elif (
            baseline
            and timing.median_ms > baseline * (1.0 + settings.max_latency_regression)
            and timing.median_ms - baseline > settings.latency_noise_ms
        ):
            phase.ok = False
            phase.reason = (
                f"{timing.median_ms:.3f} ms is {timing.median_ms / baseline - 1:.0%} slower than "
                f"the install baseline {baseline:.3f} ms "
                f"(allowed {settings.max_latency_regression:.0%})"
            )
        report.phases.append(phase)
    failed = [p for p in report.phases if not p.ok]
    if failed:
        report.ok = False
        report.reason = "; ".join(f"{p.phase}: {p.reason}" for p in failed)
    return report
