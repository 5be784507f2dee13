"""The latency rule `health` applies (agent/latency.py), as a pure function over numbers: which
term sets a phase's limit, and what the verdict says. The real bundles' side is in
test_health_latency.py."""

from __future__ import annotations

import pytest
from trt_edge_runner.agent.config import HealthSettings
from trt_edge_runner.agent.latency import LatencySummary, judge_latency, summarize

DEFAULTS = HealthSettings()  # 50 %, 3 x spread, 1 ms floor, no budget


def median_of(ms: float, runs: int = 15) -> LatencySummary:
    return LatencySummary(ms, 0.0, runs)


def test_the_issues_sub_millisecond_slowdown_passes_on_the_absolute_floor() -> None:
    verdict = judge_latency(median_of(0.318), 0.021, 0.002, DEFAULTS)
    assert verdict.ok and verdict.bound_by == "floor"
    assert verdict.limit_ms == pytest.approx(1.021)
    assert verdict.reason == (
        "median 0.318 ms of 15 run(s) is within the install baseline 0.021 ms + 1.000 ms "
        "allowed (limit 1.021 ms, set by the absolute floor 1 ms)"
    )


def test_a_long_phase_is_held_to_the_relative_bound() -> None:
    assert judge_latency(median_of(14.9), 10.0, 0.1, DEFAULTS).ok
    verdict = judge_latency(median_of(30.0), 10.0, 0.1, DEFAULTS)
    assert not verdict.ok and verdict.bound_by == "relative" and verdict.limit_ms == 15.0
    assert verdict.reason == (
        "median 30.000 ms of 15 run(s) is 200% slower than the install baseline 10.000 ms "
        "+ 5.000 ms allowed (limit 15.000 ms, set by the relative bound 50% x baseline)"
    )


def test_a_phase_that_scattered_at_install_is_given_its_spread() -> None:
    verdict = judge_latency(median_of(18.0), 10.0, 3.0, DEFAULTS)
    assert verdict.ok and verdict.bound_by == "spread" and verdict.allowed_ms == 9.0
    failed = judge_latency(median_of(19.5), 10.0, 3.0, DEFAULTS)
    assert not failed.ok and "set by 3 x the install spread 3.000 ms" in failed.reason


def test_a_baseline_without_a_spread_is_judged_by_the_other_terms() -> None:
    verdict = judge_latency(median_of(16.0), 10.0, None, DEFAULTS)
    assert not verdict.ok and verdict.bound_by == "relative"


def test_the_device_budget_fails_a_phase_before_any_baseline() -> None:
    budgeted = HealthSettings(latency_budget_ms=5.0)
    verdict = judge_latency(median_of(6.0), 6.0, 0.0, budgeted)
    assert not verdict.ok and verdict.bound_by == "budget" and verdict.limit_ms == 5.0
    assert (
        verdict.reason == "median 6.000 ms of 15 run(s) exceeds this device's latency budget 5 ms"
    )


def test_no_baseline_passes_and_says_so() -> None:
    verdict = judge_latency(median_of(3.0), None, None, DEFAULTS)
    assert verdict.ok and verdict.bound_by is None and verdict.limit_ms is None
    assert verdict.reason.endswith("no install baseline to judge")
    budgeted = judge_latency(median_of(3.0), None, None, HealthSettings(latency_budget_ms=5.0))
    assert budgeted.ok and budgeted.bound_by == "budget" and budgeted.limit_ms == 5.0
    assert budgeted.reason.endswith("within this device's latency budget 5 ms; no baseline")


def test_three_times_slower_fails_once_the_slowdown_is_past_the_floor() -> None:
    assert judge_latency(median_of(0.6), 0.2, 0.01, DEFAULTS).ok  # 0.4 ms: noise here
    assert not judge_latency(median_of(6.0), 2.0, 0.1, DEFAULTS).ok


def test_summary_is_median_and_median_absolute_deviation() -> None:
    runs = [1.0] * 7 + [1.2] * 7 + [40.0]  # one run the scheduler interrupted
    summary = summarize(runs)
    assert (summary.median_ms, summary.runs) == (1.2, 15)
    assert summary.spread_ms == pytest.approx(0.2)
    with pytest.raises(ValueError, match="at least one timed run"):
        summarize([])
