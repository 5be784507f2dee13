"""The pure rollout planner: which devices fit the bundle, and which wave each one is in.

No I/O and no Ansible here, so a 10,000-device plan takes milliseconds and is
tested exhaustively. Waves are cumulative: `[1, "10%", "50%", "100%"]` over 200
eligible devices means 1, then up to 20, up to 100, then all 200 in total; the
device order is the inventory's, so the canary is the first eligible host.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from trt_edge_runner.agent.facts import fingerprint_mismatches

from trt_edge.fleet.inventory import Device
from trt_edge.fleet.plan import WaveSpec, parse_amount


@dataclass(frozen=True)
class Skipped:
    """A device of the plan's groups that gets no wave: its facts are unknown or do not
    fit the bundle's target (`reason` says which, for the rollout report)."""

    device: Device
    reason: str


@dataclass(frozen=True)
class Schedule:
    """The waves in order, each holding only the devices it adds (a device is in one
    wave), the skipped devices, and how many devices fit the target."""

    waves: tuple[tuple[Device, ...], ...]
    skipped: tuple[Skipped, ...]
    eligible: int

    @property
    def scheduled(self) -> int:
        return sum(len(w) for w in self.waves)


def cumulative_targets(specs: Sequence[WaveSpec], eligible: int) -> list[int]:
    """Cumulative device counts per wave, clamped to `eligible` and never decreasing."""
    totals: list[int] = []
    reached = 0
    for i, spec in enumerate(specs):
        kind, amount = parse_amount(spec, f"wave {i + 1}")
        want = int(amount) if kind == "count" else math.ceil(eligible * amount / 100.0)
        reached = max(reached, min(eligible, want))
        totals.append(reached)
    return totals


def plan_waves(
    devices: Sequence[Device],
    target: Mapping[str, Any],
    groups: Sequence[str],
    wave_specs: Sequence[WaveSpec],
) -> Schedule:
    """Filter `devices` to `groups`, skip the ones whose facts do not fit `target`, cut waves."""
    wanted = set(groups)
    eligible: list[Device] = []
    skipped: list[Skipped] = []
    # A fleet has few distinct hardware/software configurations: decide each once.
    verdicts: dict[tuple[tuple[str, Any], ...], str] = {}
    for device in devices:
        if wanted.isdisjoint(device.groups):
            continue
        if device.facts is None:
            skipped.append(Skipped(device, f"facts unknown: {device.facts_problem}"))
            continue
        key = tuple(sorted(device.facts.items()))
        verdict = verdicts.get(key)
        if verdict is None:
            reasons = fingerprint_mismatches(target, device.facts)
            verdict = "fingerprint mismatch: " + "; ".join(reasons) if reasons else ""
            verdicts[key] = verdict
        if verdict:
            skipped.append(Skipped(device, verdict))
            continue
        eligible.append(device)
    waves: list[tuple[Device, ...]] = []
    start = 0
    for total in cumulative_targets(wave_specs, len(eligible)):
        if total > start:
            waves.append(tuple(eligible[start:total]))
            start = total
    return Schedule(tuple(waves), tuple(skipped), len(eligible))


def threshold_crossed(threshold: WaveSpec, failed: int, attempted: int) -> bool:
    """True when `failed` of `attempted` devices is more than the plan's failure threshold."""
    kind, amount = parse_amount(threshold, "failure_threshold")
    if kind == "count":
        return failed > amount
    return attempted > 0 and failed * 100.0 / attempted > amount
