"""The rollout's halt rule (`trt_edge.fleet.halt`), alone: no Ansible, no devices."""

from __future__ import annotations

from trt_edge.fleet.halt import Halt, Tally, halt_after_wave
from trt_edge.fleet.report import DeviceResult


def _wave(number: int, *outcomes: str) -> list[DeviceResult]:
    return [DeviceResult(f"dev{number}-{i}", o, number) for i, o in enumerate(outcomes)]


def test_tally_counts_every_result_not_updated_as_failed() -> None:
    results = _wave(1, "updated", "failed", "rolled_back", "unreachable")
    assert Tally().after(results) == Tally(attempted=4, failed=3)
    assert Tally(2, 1).after(_wave(2, "updated")) == Tally(attempted=3, failed=1)


def test_no_halt_while_failures_stay_within_the_threshold() -> None:
    results = _wave(1, "updated", "failed")
    assert halt_after_wave(1, "rollback_wave", Tally().after(results), 1, results) is None
    assert halt_after_wave("50%", "rollback_wave", Tally().after(results), 1, results) is None


def test_halt_past_the_count_rolls_back_the_waves_updated_devices() -> None:
    results = _wave(2, "updated", "failed", "updated")
    halt = halt_after_wave(0, "rollback_wave", Tally(1, 0).after(results), 2, results)
    assert halt == Halt(
        "1 of 4 device(s) failed by wave 2, more than the failure threshold 0; "
        "later waves not started",
        (results[0], results[2]),
    )


def test_halt_with_keep_rolls_nothing_back() -> None:
    results = _wave(1, "updated", "failed")
    halt = halt_after_wave(0, "keep", Tally().after(results), 1, results)
    assert halt is not None and halt.roll_back == ()


def test_a_percentage_is_of_the_devices_attempted_so_far() -> None:
    canary = _wave(1, "updated")
    tally = Tally().after(canary)
    assert halt_after_wave("10%", "rollback_wave", tally, 1, canary) is None
    second = _wave(2, *(["updated"] * 8), "failed")  # 1 of 10 attempted: 10%, not more
    tally = tally.after(second)
    assert halt_after_wave("10%", "rollback_wave", tally, 2, second) is None
    third = _wave(3, "failed")  # 2 of 11: past 10%
    halt = halt_after_wave("10%", "rollback_wave", tally.after(third), 3, third)
    assert halt is not None and halt.reason.startswith("2 of 11 device(s) failed by wave 3")
    assert halt.roll_back == ()
