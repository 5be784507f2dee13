"""The rollout's halt rule: after which wave the rollout stops, and which devices go back.

Pure (no I/O, no Ansible), so the rule is tested alone and `execute.run_rollout` only
acts on its answer. A rollout halts after the first wave whose results bring the
devices failed so far past the plan's `failure_threshold` (a count, or a percentage
of the devices attempted so far; skipped and not attempted devices count for
neither); later waves are not started. With `on_halt: rollback_wave` the halting
wave's updated devices are rolled back too; with `keep` they stay on the new version.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from trt_edge.fleet.plan import WaveSpec
from trt_edge.fleet.report import DeviceResult
from trt_edge.fleet.schedule import threshold_crossed


@dataclass(frozen=True)
class Tally:
    """The devices a rollout has attempted so far and how many of them did not update."""

    attempted: int = 0
    failed: int = 0

    def after(self, results: Sequence[DeviceResult]) -> Tally:
        """The tally once a wave's `results` (after its gates) are counted."""
        failed = sum(1 for result in results if result.result != "updated")
        return Tally(self.attempted + len(results), self.failed + failed)


@dataclass(frozen=True)
class Halt:
    """Stop the rollout: why (for the report), and the wave's devices to roll back."""

    reason: str
    roll_back: tuple[DeviceResult, ...] = ()


def halt_after_wave(
    threshold: WaveSpec,
    on_halt: Literal["rollback_wave", "keep"],
    tally: Tally,
    number: int,
    results: Sequence[DeviceResult],
) -> Halt | None:
    """Whether the rollout stops after wave `number`, whose `results` are counted in `tally`."""
    if not threshold_crossed(threshold, tally.failed, tally.attempted):
        return None
    reason = (
        f"{tally.failed} of {tally.attempted} device(s) failed by wave {number}, more than the "
        f"failure threshold {threshold}; later waves not started"
    )
    if on_halt != "rollback_wave":
        return Halt(reason)
    return Halt(reason, tuple(d for d in results if d.result == "updated"))
