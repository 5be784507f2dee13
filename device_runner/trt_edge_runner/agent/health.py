"""`health`: run every phase of the active bundle and compare with the install baseline.

A device fails its gate when a phase does not run, when the median of its timed runs
exceeds the device's absolute `latency_budget_ms`, or when it is slower than its
install baseline by more than the largest of the relative bound
(`max_latency_regression` x baseline), `latency_spread_factor` x the spread of the
install runs, and the absolute floor `latency_noise_ms` (`agent/latency.py` holds the
rule and says why). Every phase's entry says which term set its limit and why it
passed or failed. The limits are device settings (`device.json`), the relative bound
also given on the command line by a rollout.
"Does not run" includes the runner refusing the bundle, and the runner dying of
a signal or overrunning its time limit (`RunnerCrashed`: named with the stage it
died in): the model is what failed, so the gate fails, it is not an agent error.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from trt_edge_runner.agent.config import (
    DEFAULT_LATENCY_RUNS,
    DEFAULT_WARMUP_RUNS,
    HealthSettings,
)
from trt_edge_runner.agent.errors import AgentConfigError, NothingInstalled
from trt_edge_runner.agent.latency import judge_latency
from trt_edge_runner.agent.reports import CommandFailure, decode_command_failure
from trt_edge_runner.agent.smoke import PhaseExecutor, run_every_phase
from trt_edge_runner.agent.store import DeviceStore
from trt_edge_runner.json_documents import parse_json_object
from trt_edge_runner.schemas import DocumentError, validate


@dataclass
class PhaseHealth:
    """One phase's judgement. `latency_ms` is the median of `runs` timed runs, `spread_ms`
    their median absolute deviation; `baseline_*` what install recorded; the phase may reach
    `limit_ms` (baseline + `allowed_ms`, the term `bound_by` set it). None where a device
    (an older one, or a phase with no baseline) has no such figure."""

    phase: str
    ok: bool
    latency_ms: float | None
    baseline_ms: float | None
    reason: str = ""
    runs: int | None = None
    spread_ms: float | None = None
    baseline_spread_ms: float | None = None
    allowed_ms: float | None = None
    limit_ms: float | None = None
    bound_by: str | None = None


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
        """`health --json`: held to `device-health.schema.json` (`decode_health` reads it);
        a figure a phase does not have is left out rather than written as null."""
        doc = asdict(self)
        doc["phases"] = [
            {k: v for k, v in phase.items() if v is not None or k in _PHASE_REQUIRED}
            for phase in doc["phases"]
        ]
        return doc


_PHASE_REQUIRED = ("phase", "ok", "latency_ms", "baseline_ms")
_SETTINGS_REQUIRED = ("max_latency_regression", "latency_budget_ms", "latency_noise_ms")


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
            key: settings[key]
            for key in (*_SETTINGS_REQUIRED, "latency_spread_factor")
            if key in settings  # an older device reports no spread factor
        },
        phases=[
            PhaseHealth(
                phase=p["phase"],
                ok=p["ok"],
                latency_ms=p["latency_ms"],
                baseline_ms=p["baseline_ms"],
                reason=p.get("reason", ""),
                runs=p.get("runs"),
                spread_ms=p.get("spread_ms"),
                baseline_spread_ms=p.get("baseline_spread_ms"),
                allowed_ms=p.get("allowed_ms"),
                limit_ms=p.get("limit_ms"),
                bound_by=p.get("bound_by"),
            )
            for p in doc["phases"]
        ],
        reason=doc.get("reason", ""),
        engine=doc.get("engine", ""),
    )


def check_health(
    store: DeviceStore,
    settings: HealthSettings,
    open_executor: Callable[[], PhaseExecutor],
    runs: int = DEFAULT_LATENCY_RUNS,
    warmup: int = DEFAULT_WARMUP_RUNS,
) -> HealthReport:
    """Run the active bundle's phases and judge them; NothingInstalled when there is none.

    `open_executor` is called once something is known to be installed (so "nothing is
    installed" is reported as such on a device without a runner too); a missing or
    broken runner is then an error of its own, not a failed gate.
    """
    state = store.load()
    info = state.info(state.active)
    if state.active is None or info is None:
        raise NothingInstalled(
            f"{store.root}: no bundle is installed on this device; nothing to check"
        )
    executor = open_executor()
    report = HealthReport(
        ok=True,
        slot=state.active,
        name=info.name,
        version=info.version,
        settings=asdict(settings),
        engine=executor.name,
    )
    try:
        timings = run_every_phase(store.slot_dir(state.active), executor, runs, warmup)
    except AgentConfigError:  # a missing or broken runner: the device's setup, not the model
        raise
    except Exception as exc:  # a model that no longer runs is the failure health reports
        report.ok = False
        report.reason = f"running {info.name} {info.version} failed: {exc}"
        return report
    for timing in timings:
        measured = timing.summary
        baseline = info.baseline_ms.get(timing.phase)
        baseline_spread = info.baseline_spread_ms.get(timing.phase)
        verdict = judge_latency(measured, baseline, baseline_spread, settings)
        report.phases.append(
            PhaseHealth(
                phase=timing.phase,
                ok=verdict.ok,
                latency_ms=round(measured.median_ms, 4),
                baseline_ms=baseline,
                reason=verdict.reason,
                runs=measured.runs,
                spread_ms=round(measured.spread_ms, 4),
                baseline_spread_ms=baseline_spread,
                allowed_ms=None if verdict.allowed_ms is None else round(verdict.allowed_ms, 4),
                limit_ms=None if verdict.limit_ms is None else round(verdict.limit_ms, 4),
                bound_by=verdict.bound_by,
            )
        )
    failed = [p for p in report.phases if not p.ok]
    if failed:
        report.ok = False
        report.reason = "; ".join(f"{p.phase}: {p.reason}" for p in failed)
    return report
