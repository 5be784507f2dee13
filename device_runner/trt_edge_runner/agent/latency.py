"""How `health` judges a phase's latency against its install baseline: a pure function over
numbers (no runner, no files), so the rule is tested on its own and the caller reports.

One timing of a sub-millisecond phase says little: a thread descheduled for one
scheduler tick costs more than the model (a 0.021 ms phase measured 0.318 ms on a
loaded two-core machine, and a relative bound then rolled back a healthy bundle). So
both sides are many runs after a warm-up, summarised by their median (robust to the
few runs a busy machine interrupts), and the slowdown a phase may show before it fails
is the largest of three terms:

- `relative`: `max_latency_regression` x the baseline (0.5: 50 % slower), what a
  regression means for a phase long enough to time;
- `spread`: `latency_spread_factor` x the spread this very phase showed at install
  (the median absolute deviation of its runs): a device whose timings scatter widely
  cannot tell a small change from its own noise, and says so;
- `floor`: `latency_noise_ms`, an absolute slowdown below which nothing fails
  (default 1 ms): timer and scheduler noise, never a rollback.

The verdict names the term that set the limit, so a report says why a phase passed or
failed. A baseline without a spread (a state.json written before the spread was kept)
judges with the other two terms.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from trt_edge_runner.agent.config import HealthSettings

BOUND_TERMS = ("relative", "spread", "floor")


@dataclass(frozen=True)
class LatencySummary:
    """Timed runs of one phase: their median, their spread (median absolute deviation from
    that median) and how many there were."""

    median_ms: float
    spread_ms: float
    runs: int


def summarize(runs_ms: Sequence[float]) -> LatencySummary:
    """The median and median absolute deviation of `runs_ms` (at least one run).

    The MAD, not the standard deviation or p90 - p10: one interrupted run among fifteen
    moves it little, so the spread describes the phase, not the worst tick of the run."""
    if not runs_ms:
        raise ValueError("summarize needs at least one timed run")
    median = statistics.median(runs_ms)
    spread = statistics.median(abs(ms - median) for ms in runs_ms)
    return LatencySummary(median, spread, len(runs_ms))


@dataclass(frozen=True)
class LatencyVerdict:
    """The judgement of one phase: `limit_ms` is what its median may reach (baseline +
    `allowed_ms`), `bound_by` the term that set `allowed_ms`, or "budget" when the device's
    absolute budget is what the phase was held to (it failed it, or there is no baseline);
    `reason` says why it passed or failed."""

    ok: bool
    allowed_ms: float | None
    limit_ms: float | None
    bound_by: str | None
    reason: str


def allowed_slowdown(
    baseline_ms: float, spread_ms: float | None, settings: HealthSettings
) -> tuple[float, str]:
    """(ms a phase may be slower than `baseline_ms`, the term that set it); ties go to the
    first of relative, spread, floor."""
    terms = {
        "relative": settings.max_latency_regression * baseline_ms,
        "spread": settings.latency_spread_factor * (spread_ms or 0.0),
        "floor": settings.latency_noise_ms,
    }
    term = max(BOUND_TERMS, key=lambda name: terms[name])
    return terms[term], term


_TERM_WORDS = {
    "relative": "the relative bound {regression:.0%} x baseline",
    "spread": "{factor:g} x the install spread {spread:.3f} ms",
    "floor": "the absolute floor {floor:g} ms",
}


def judge_latency(
    measured: LatencySummary,
    baseline_ms: float | None,
    spread_ms: float | None,
    settings: HealthSettings,
) -> LatencyVerdict:
    """Pass or fail one phase's median against the device's budget, then its baseline."""
    median = measured.median_ms
    over = f"median {median:.3f} ms of {measured.runs} run(s)"
    budget = settings.latency_budget_ms
    if budget is not None and median > budget:
        return LatencyVerdict(
            False,
            None,
            budget,
            "budget",
            f"{over} exceeds this device's latency budget {budget:g} ms",
        )
    if not baseline_ms:  # installed without a smoke run (an image staged elsewhere)
        if budget is None:
            return LatencyVerdict(True, None, None, None, f"{over}; no install baseline to judge")
        within = f"within this device's latency budget {budget:g} ms"
        return LatencyVerdict(True, None, budget, "budget", f"{over} is {within}; no baseline")
    allowed, term = allowed_slowdown(baseline_ms, spread_ms, settings)
    limit = baseline_ms + allowed
    words = _TERM_WORDS[term].format(
        regression=settings.max_latency_regression,
        factor=settings.latency_spread_factor,
        spread=spread_ms or 0.0,
        floor=settings.latency_noise_ms,
    )
    against = (
        f"the install baseline {baseline_ms:.3f} ms + {allowed:.3f} ms allowed "
        f"(limit {limit:.3f} ms, set by {words})"
    )
    if median > limit:
        slower = f"{median / baseline_ms - 1:.0%} slower"
        return LatencyVerdict(False, allowed, limit, term, f"{over} is {slower} than {against}")
    return LatencyVerdict(True, allowed, limit, term, f"{over} is within {against}")
