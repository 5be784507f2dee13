"""A staged rollout of a pull fleet: the rollout plan's waves as commands over MQTT.

The same plan as an SSH rollout — `waves`, `failure_threshold`, `on_halt` — over devices
that connect out. Per wave: each device is sent `update` (the candidate's reference and
version); it passes once its state reports the candidate's version and — when the plan
gates on health (`require_health`) — a passing health check of that version (the link's
`--health`). A device that reports a failing check, refuses the update, or does not pass
within `wave_timeout_s` fails; one that runs the candidate but failed its check is sent
`rollback` (`rolled_back`), one that never took it is sent `hold`. With the plan's
`health.metrics`, the devices that passed are then judged on live traffic (`live_traffic`).
After each wave the halt
rule (`fleet/halt.py`, the SSH rollout's) decides; on a halt the wave's updated devices are
rolled back (`on_halt: rollback_wave`) and every device of later waves is sent `hold`
(`not_attempted`). The report is the SSH rollout's `RolloutReport`.

What installs the candidate is the device's follower (`trt-edge-device follow`), which reads
`desired.json`; this driver only talks to the links.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from trt_edge_runner.link.desired import PullTarget
from trt_edge_runner.link.documents import Action, Command, DeviceState
from trt_edge_runner.link.state import now

from trt_edge.fleet.halt import Tally, halt_after_wave
from trt_edge.fleet.metrics_gate import judge
from trt_edge.fleet.mqtt.operator_client import FleetSession
from trt_edge.fleet.plan import MetricsGate, WaveSpec
from trt_edge.fleet.report import DeviceResult, RolloutReport
from trt_edge.fleet.schedule import cumulative_targets

ACK_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class PullPlan:
    """What to roll out to whom, in which waves, and when to stop."""

    target: PullTarget
    devices: tuple[str, ...]
    waves: tuple[WaveSpec, ...] = ("100%",)
    failure_threshold: WaveSpec = 0
    on_halt: Literal["rollback_wave", "keep"] = "rollback_wave"
    require_health: bool = True
    wave_timeout_s: float = 900.0
    # The plan's `health.metrics`: judged on the service metrics the devices' links publish
    # (`--metrics-url`), from two of each device's states `window_s` apart.
    metrics: MetricsGate | None = None


def cut_waves(devices: Sequence[str], specs: Sequence[WaveSpec]) -> list[tuple[str, ...]]:
    """The devices each wave adds (the plan's cumulative counts and percentages)."""
    waves, start = [], 0
    for total in cumulative_targets(specs, len(devices)):
        if total > start:
            waves.append(tuple(devices[start:total]))
            start = total
    return waves


class _Driver:
    def __init__(self, session: FleetSession, plan: PullPlan, progress: Callable[[str], None]):
        self.session = session
        self.plan = plan
        self.progress = progress
        self.run_id = secrets.token_hex(4)

    def command_all(self, devices: Sequence[str], action: Action, tag: str) -> dict[str, str]:
        """Send `action` to every device and wait for the acks: device → "" (done) or why not."""
        ids = {}
        for device in devices:
            command = Command(
                command_id=f"pull-{self.run_id}-{tag}-{device}",
                action=action,
                issued_at=now(),
                target=self.plan.target if action == "update" else None,
            )
            ids[device] = command.command_id
            self.session.send(device, command)
        acks = self.session.acks
        self.session.wait_for(lambda: all(i in acks for i in ids.values()), ACK_TIMEOUT_S)
        outcome = {}
        for device, command_id in ids.items():
            ack = acks.get(command_id)
            if ack is None:
                outcome[device] = f"no ack to {action} within {ACK_TIMEOUT_S:g} s (offline?)"
            else:
                outcome[device] = (
                    "" if ack.outcome == "done" else f"{action} {ack.outcome}: {ack.message}"
                )
        return outcome

    def verdict(self, device: str) -> str | None:
        """None while undecided; "" when the device passed; else why it failed."""
        entry = self.session.view.devices.get(device)
        state = entry.state if entry else None
        if state is None or state.version != self.plan.target.version:
            return None
        if not self.plan.require_health:
            return ""
        health = state.health
        if health is None or health.version != self.plan.target.version:
            return None
        return "" if health.ok else f"health check failed: {health.reason}"

    def run_wave(self, number: int, devices: tuple[str, ...]) -> list[DeviceResult]:
        self.progress(f"wave {number}: update {', '.join(devices)} to {self.plan.target.version}")
        started = time.monotonic()
        refused = {
            d: why for d, why in self.command_all(devices, "update", f"w{number}").items() if why
        }
        pending = [d for d in devices if d not in refused]
        self.session.wait_for(
            lambda: all(self.verdict(d) is not None for d in pending), self.plan.wave_timeout_s
        )
        results = []
        for device in devices:
            verdict = refused.get(device, self.verdict(device))
            if verdict is None:
                verdict = (
                    f"did not report {self.plan.target.version}"
                    + (" with a passing health check" if self.plan.require_health else "")
                    + f" within {self.plan.wave_timeout_s:g} s"
                )
            results.append(
                DeviceResult(
                    host=device,
                    result="updated" if verdict == "" else "failed",
                    wave=number,
                    new_version=self.plan.target.version if verdict == "" else None,
                    reason=verdict,
                    seconds=round(time.monotonic() - started, 3),
                )
            )
        self.live_traffic(number, [r for r in results if r.result == "updated"])
        self.undo_failures(number, results)
        return results

    def state(self, device: str) -> DeviceState | None:
        entry = self.session.view.devices.get(device)
        return entry.state if entry else None

    def live_traffic(self, number: int, updated: list[DeviceResult]) -> None:
        """The live-traffic gate on the wave's updated devices: the gate's figures from a
        state each published after it passed and one `window_s` later, judged as the SSH
        rollout judges its two scrapes; a device over a threshold fails."""
        gate = self.plan.metrics
        if gate is None or not updated:
            return
        self.progress(f"wave {number}: live-traffic gate, window {gate.window_s:g} s")
        first = {r.host: self.state(r.host) for r in updated}
        opened = {h: _instant(s.at) for h, s in first.items() if s is not None}

        def window_closed(host: str) -> bool:
            state = self.state(host)
            return state is not None and _instant(state.at) >= opened[host] + gate.window_s

        self.session.wait_for(
            lambda: all(window_closed(h) for h in opened), gate.window_s + ACK_TIMEOUT_S
        )
        for result in updated:
            before, after = first[result.host], self.state(result.host)
            problem = _metrics_problem(before, after, gate.window_s, window_closed(result.host))
            if problem:
                result.result, result.reason = "failed", f"live-traffic gate: {problem}"
                continue
            assert before is not None and after is not None
            assert before.metrics is not None and after.metrics is not None
            expected = {"name": after.name or "", "version": self.plan.target.version}
            verdict = judge(result.host, before.metrics, after.metrics, gate.thresholds(), expected)
            result.metrics = verdict.figures
            if verdict.ok:
                result.reason = "; ".join(verdict.notes)
            else:
                result.result, result.reason = "failed", "; ".join(verdict.failures)

    def runs_candidate(self, device: str) -> bool:
        entry = self.session.view.devices.get(device)
        return bool(entry and entry.state and entry.state.version == self.plan.target.version)

    def undo_failures(self, number: int, results: list[DeviceResult]) -> None:
        """A failed device that runs the candidate goes back; one that never took it holds."""
        failed = [r for r in results if r.result == "failed"]
        back = [r.host for r in failed if self.runs_candidate(r.host)]
        hold = [r.host for r in failed if r.host not in back]
        for device, why in self.command_all(back, "rollback", f"w{number}-back").items():
            result = next(r for r in results if r.host == device)
            result.result = "rolled_back" if not why else "failed"
            result.reason += f"; {why}" if why else "; rolled back"
        self.command_all(hold, "hold", f"w{number}-hold")


def _instant(at: str) -> float:
    """A state's `at` (RFC 3339, UTC) in seconds since the epoch."""
    return datetime.fromisoformat(at.replace("Z", "+00:00")).timestamp()


def _metrics_problem(
    before: DeviceState | None, after: DeviceState | None, window_s: float, closed: bool
) -> str:
    """Why a device's two states cannot be judged ("" when they can)."""
    for state in (before, after):
        if state is None or state.metrics is None:
            why = (state.metrics_error if state is not None else None) or "no --metrics-url"
            return f"no service metrics in the device's state ({why})"
    if not closed:
        return f"no state {window_s:g} s after the first one"
    return ""


def run_pull_rollout(
    session: FleetSession, plan: PullPlan, progress: Callable[[str], None] = lambda _: None
) -> RolloutReport:
    """Roll `plan` out wave by wave through `session`; the report says what happened."""
    driver = _Driver(session, plan, progress)
    waves = cut_waves(plan.devices, plan.waves)
    report = RolloutReport(
        bundle=plan.target.reference,
        name="",
        version=plan.target.version,
        target={},
        dry_run=False,
        waves=[list(w) for w in waves],
    )
    tally = Tally()
    for number, devices in enumerate(waves, start=1):
        results = driver.run_wave(number, devices)
        report.devices.extend(results)
        report.waves_run = number
        tally = tally.after(results)
        halt = halt_after_wave(plan.failure_threshold, plan.on_halt, tally, number, results)
        if halt is None:
            continue
        report.halted, report.halt_reason = True, halt.reason
        progress(f"halted: {halt.reason}")
        for device, why in driver.command_all(
            [d.host for d in halt.roll_back], "rollback", f"w{number}-halt"
        ).items():
            result = next(r for r in results if r.host == device)
            result.result = "rolled_back" if not why else "failed"
            result.reason = why or "rolled back: the rollout halted"
        later = [d for wave in waves[number:] for d in wave]
        held = driver.command_all(later, "hold", "halt-hold")
        report.devices.extend(
            DeviceResult(
                host=d,
                result="not_attempted",
                reason="held: the rollout halted" + (f" ({held[d]})" if held[d] else ""),
            )
            for d in later
        )
        break
    names = {
        entry.state.name
        for entry in session.view.devices.values()
        if entry.state and entry.state.version == plan.target.version and entry.state.name
    }
    report.name = ", ".join(sorted(names))  # what the devices that took it say it is
    return report
