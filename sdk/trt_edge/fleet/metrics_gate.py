"""The live-traffic health gate: two scrapes of a device's `/metrics`, their deltas, a verdict.

After a wave installs, the rollout scrapes each updated device's service twice, `window_s`
apart (through Ansible, on the device: the service listens on loopback), and judges what
happened in between — real requests, not smoke runs:

- error rate: requests that ended `engine_error` or `deadline` over all requests
  (`trt_edge_requests_total{endpoint,outcome}`); `bad_request`, `rejected` (queue full)
  and `cancelled` are the client's or the load's doing, not the model's;
- p95 time to first token, from the delta of the
  `trt_edge_time_to_first_token_seconds` histogram's buckets (interpolated inside the
  bucket, as Prometheus' `histogram_quantile` does);
- runner restarts (`trt_edge_runner_restarts_total`): each is a crashed engine;
- the bundle the service serves (`trt_edge_bundle_info{name,version,slot}`): it must be
  the one just installed.

Counters that went down between the scrapes were reset (the service restarted): the
second value is then the delta, as Prometheus' `rate` treats resets. With fewer than
`min_requests` requests in the window the rate and latency thresholds are not judged
(too few samples to mean anything) unless the plan says `require_traffic`. The text is
parsed by `prometheus_client.parser`; nothing here does I/O.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from trt_edge.fleet.errors import RolloutError

REQUESTS = "trt_edge_requests_total"
TTFT = "trt_edge_time_to_first_token_seconds"
RESTARTS = "trt_edge_runner_restarts_total"
BUNDLE_INFO = "trt_edge_bundle_info"
ERROR_OUTCOMES = frozenset({"engine_error", "deadline"})

SampleKey = tuple[str, tuple[tuple[str, str], ...]]


class MetricsParseError(RolloutError, ValueError):
    """A scrape that is not Prometheus text exposition format."""


@dataclass(frozen=True)
class Scrape:
    """One scrape's samples: (sample name, sorted labels) → value."""

    samples: dict[SampleKey, float]

    @classmethod
    def parse(cls, text: str) -> Scrape:
        from prometheus_client.parser import text_string_to_metric_families

        samples: dict[SampleKey, float] = {}
        try:
            for family in text_string_to_metric_families(text):
                for sample in family.samples:
                    key = (sample.name, tuple(sorted(sample.labels.items())))
                    samples[key] = float(sample.value)
        except (ValueError, TypeError, IndexError) as exc:
            raise MetricsParseError(f"not Prometheus text format: {exc}") from None
        return cls(samples)

    def named(self, name: str) -> dict[tuple[tuple[str, str], ...], float]:
        return {labels: v for (n, labels), v in self.samples.items() if n == name}


def counter_delta(
    before: Scrape, after: Scrape, name: str
) -> dict[tuple[tuple[str, str], ...], float]:
    """Per label set, how much counter `name` grew between the scrapes (a reset counts
    from zero; a label set new in `after` started at zero)."""
    old = before.named(name)
    deltas = {}
    for labels, value in after.named(name).items():
        previous = old.get(labels, 0.0)
        deltas[labels] = value - previous if value >= previous else value
    return deltas


def histogram_quantile(q: float, buckets: Iterable[tuple[float, float]]) -> float | None:
    """The q-quantile from cumulative `(upper bound, count)` buckets (the last `+Inf`), by
    linear interpolation inside the bucket that holds it; None with no observations. In
    the `+Inf` bucket the highest finite bound is the answer, as in Prometheus."""
    ordered = sorted(buckets)
    if not ordered or ordered[-1][1] <= 0:
        return None
    total = ordered[-1][1]
    rank = q * total
    lower_bound, lower_count = 0.0, 0.0
    for bound, count in ordered:
        if count >= rank:
            if math.isinf(bound):
                return lower_bound
            if count == lower_count:
                return bound
            return lower_bound + (bound - lower_bound) * (rank - lower_count) / (
                count - lower_count
            )
        lower_bound, lower_count = bound, count
    return lower_bound


def bucket_delta(before: Scrape, after: Scrape, name: str) -> list[tuple[float, float]]:
    """The histogram's cumulative buckets grown between the scrapes, summed over every label
    set but `le` (e.g. per endpoint), as `(upper bound, count)`."""
    grown = counter_delta(before, after, f"{name}_bucket")
    per_bound: dict[float, float] = {}
    for labels, value in grown.items():
        le = dict(labels).get("le")
        if le is None:
            continue
        bound = float(le)  # "+Inf" parses as inf
        per_bound[bound] = per_bound.get(bound, 0.0) + value
    return sorted(per_bound.items())


@dataclass(frozen=True)
class MetricsThresholds:
    """The plan's `health.metrics` thresholds (None: not judged)."""

    min_requests: int = 1
    max_error_rate: float | None = None
    max_ttft_p95_ms: float | None = None
    max_restarts: int | None = None
    require_traffic: bool = False


@dataclass
class MetricsVerdict:
    """What one device's window showed: the figures, each crossed threshold (naming the
    device, metric, value and threshold), and notes on what was not judged."""

    host: str
    figures: dict[str, Any] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failures


def judge(
    host: str,
    before_text: str,
    after_text: str,
    thresholds: MetricsThresholds,
    expected_bundle: Mapping[str, str] | None = None,
) -> MetricsVerdict:
    """The verdict on one device from its two scrapes (`expected_bundle`: the name and
    version the wave installed, checked against `trt_edge_bundle_info`)."""
    verdict = MetricsVerdict(host)
    try:
        before, after = Scrape.parse(before_text), Scrape.parse(after_text)
    except MetricsParseError as exc:
        verdict.failures.append(f"{host}: /metrics: {exc}")
        return verdict
    requests = counter_delta(before, after, REQUESTS)
    total = sum(requests.values())
    errors = sum(
        v for labels, v in requests.items() if dict(labels).get("outcome") in ERROR_OUTCOMES
    )
    restarts = sum(counter_delta(before, after, RESTARTS).values())
    p95 = histogram_quantile(0.95, bucket_delta(before, after, TTFT))
    figures = verdict.figures
    figures.update(
        {
            "requests": int(total),
            "errors": int(errors),
            "error_rate": round(errors / total, 6) if total else None,
            "ttft_p95_ms": round(p95 * 1000.0, 3) if p95 is not None else None,
            "restarts": int(restarts),
        }
    )
    _judge_bundle(verdict, after, expected_bundle)
    if thresholds.max_restarts is not None and restarts > thresholds.max_restarts:
        verdict.failures.append(
            f"{host}: runner restarts {int(restarts)} > max_restarts {thresholds.max_restarts}"
        )
    if total < thresholds.min_requests:
        message = (
            f"{host}: {int(total)} request(s) in the window, fewer than min_requests "
            f"{thresholds.min_requests}: error rate and latency not judged"
        )
        if thresholds.require_traffic:
            verdict.failures.append(f"{message} (require_traffic)")
        else:
            verdict.notes.append(message)
        return verdict
    rate = errors / total
    if thresholds.max_error_rate is not None and rate > thresholds.max_error_rate:
        verdict.failures.append(
            f"{host}: error rate {rate:.4g} (engine_error+deadline {int(errors)} of "
            f"{int(total)} requests) > max_error_rate {thresholds.max_error_rate}"
        )
    if thresholds.max_ttft_p95_ms is not None:
        if p95 is None:
            verdict.notes.append(f"{host}: no time-to-first-token observations in the window")
        elif p95 * 1000.0 > thresholds.max_ttft_p95_ms:
            verdict.failures.append(
                f"{host}: time to first token p95 {p95 * 1000.0:.1f} ms > max_ttft_p95_ms "
                f"{thresholds.max_ttft_p95_ms}"
            )
    return verdict


def _judge_bundle(
    verdict: MetricsVerdict, after: Scrape, expected: Mapping[str, str] | None
) -> None:
    serving = [dict(labels) for labels, v in after.named(BUNDLE_INFO).items() if v > 0]
    verdict.figures["serving"] = serving
    if expected is None:
        return
    if not serving:
        verdict.notes.append(f"{verdict.host}: no {BUNDLE_INFO} sample: served bundle not checked")
        return
    wanted = (expected.get("name"), expected.get("version"))
    if not any((s.get("name"), s.get("version")) == wanted for s in serving):
        seen = ", ".join(
            f"{s.get('name')} {s.get('version')} (slot {s.get('slot')})" for s in serving
        )
        verdict.failures.append(
            f"{verdict.host}: {BUNDLE_INFO} says the service serves {seen}, not the installed "
            f"{wanted[0]} {wanted[1]}"
        )
