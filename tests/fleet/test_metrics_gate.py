"""The live-traffic gate's arithmetic on real exposition text written by prometheus_client,
with the service's metric names, labels and latency buckets."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from trt_edge.fleet.execute import metrics_verdict, read_report
from trt_edge.fleet.metrics_gate import MetricsThresholds, histogram_quantile, judge
from trt_edge.fleet.report import MetricsReport, decode_metrics_report

# What `trt-edge-device serve` exports (trt_edge_runner.serve.metrics on the serve branch).
BUCKETS = (
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
)  # fmt: skip
INSTALLED = {"name": "tiny", "version": "2.0.0"}


@dataclass
class Service:
    """A service's metrics as the device service declares them, in their own registry."""

    registry: CollectorRegistry = field(default_factory=CollectorRegistry)

    def __post_init__(self) -> None:
        r = self.registry
        self.requests = Counter("trt_edge_requests", "r", ["endpoint", "outcome"], registry=r)
        self.ttft = Histogram(
            "trt_edge_time_to_first_token_seconds", "t", buckets=BUCKETS, registry=r
        )
        Histogram("trt_edge_time_per_output_token_seconds", "t", buckets=BUCKETS, registry=r)
        Histogram(
            "trt_edge_execute_seconds", "e", ["phase", "profile"], buckets=BUCKETS, registry=r
        )
        Gauge("trt_edge_queue_depth", "q", registry=r).set(2)
        self.restarts = Counter("trt_edge_runner_restarts", "x", registry=r)
        self.bundle = Gauge("trt_edge_bundle_info", "b", ["name", "version", "slot"], registry=r)
        self.bundle.labels(name="tiny", version="2.0.0", slot="B").set(1)

    def serve(self, outcome: str, n: int, endpoint: str = "/v1/chat/completions") -> None:
        self.requests.labels(endpoint=endpoint, outcome=outcome).inc(n)

    def text(self) -> str:
        return generate_latest(self.registry).decode()


def test_error_rate_is_engine_errors_and_deadlines_over_every_request() -> None:
    service = Service()
    service.serve("ok", 10)  # before the window: not judged
    service.serve("engine_error", 10)
    first = service.text()
    service.serve("ok", 30)
    service.serve("engine_error", 1)
    service.serve("deadline", 1, endpoint="/v2/models/tiny/infer")
    service.serve("bad_request", 5)  # the client's doing
    service.serve("rejected", 3)  # load: 503 with Retry-After
    limits = MetricsThresholds(max_error_rate=0.04)
    verdict = judge("dev1", first, service.text(), limits, INSTALLED)
    assert verdict.figures["requests"] == 40 and verdict.figures["errors"] == 2
    assert verdict.figures["error_rate"] == 0.05
    assert verdict.failures == [
        "dev1: error rate 0.05 (engine_error+deadline 2 of 40 requests) > max_error_rate 0.04"
    ]
    assert judge("dev1", first, service.text(), MetricsThresholds(max_error_rate=0.05)).ok


def test_ttft_p95_comes_from_the_buckets_grown_in_the_window() -> None:
    service = Service()
    for _ in range(100):
        service.ttft.observe(2.0)  # slow, but before the window
    first = service.text()
    for _ in range(90):
        service.ttft.observe(0.02)  # bucket (0.01, 0.025]
    for _ in range(10):
        service.ttft.observe(0.3)  # bucket (0.25, 0.5]
    service.serve("ok", 100)
    # Rank 95 of 100 lies in (0.25, 0.5], whose cumulative counts go 90 → 100.
    expected_ms = (0.25 + (0.5 - 0.25) * (95 - 90) / (100 - 90)) * 1000
    verdict = judge("dev1", first, service.text(), MetricsThresholds(max_ttft_p95_ms=300.0))
    assert verdict.figures["ttft_p95_ms"] == pytest.approx(expected_ms)
    assert verdict.failures == [
        f"dev1: time to first token p95 {expected_ms:.1f} ms > max_ttft_p95_ms 300.0"
    ]
    assert judge("dev1", first, service.text(), MetricsThresholds(max_ttft_p95_ms=400)).ok


def test_a_runner_restart_in_the_window_fails_the_device() -> None:
    service = Service()
    service.restarts.inc()  # an old crash
    first = service.text()
    service.serve("ok", 50)
    assert judge("dev3", first, service.text(), MetricsThresholds(max_restarts=0)).ok
    service.restarts.inc()
    verdict = judge("dev3", first, service.text(), MetricsThresholds(max_restarts=0))
    assert verdict.failures == ["dev3: runner restarts 1 > max_restarts 0"]


def test_counters_that_went_down_were_reset_and_count_from_zero() -> None:
    old = Service()
    old.serve("ok", 500)
    old.restarts.inc(3)
    first = old.text()
    restarted = Service()  # the service restarted inside the window: fresh counters
    restarted.serve("ok", 7)
    restarted.serve("engine_error", 3)
    verdict = judge("dev2", first, restarted.text(), MetricsThresholds(max_error_rate=0.5))
    assert (verdict.figures["requests"], verdict.figures["errors"]) == (10, 3)
    assert verdict.figures["restarts"] == 0
    assert verdict.ok


def test_too_little_traffic_is_noted_not_judged_unless_traffic_is_required() -> None:
    service = Service()
    first = service.text()
    service.serve("engine_error", 3)
    quiet = MetricsThresholds(min_requests=20, max_error_rate=0.0)
    verdict = judge("dev4", first, service.text(), quiet)
    assert verdict.ok
    assert verdict.notes == [
        "dev4: 3 request(s) in the window, fewer than min_requests 20: error rate and "
        "latency not judged"
    ]
    strict = MetricsThresholds(min_requests=20, require_traffic=True)
    assert not judge("dev4", first, service.text(), strict).ok


def test_a_service_still_serving_the_old_bundle_fails() -> None:
    service = Service()
    first = service.text()
    service.serve("ok", 5)
    service.bundle.clear()
    service.bundle.labels(name="tiny", version="1.0.0", slot="A").set(1)
    verdict = judge("dev5", first, service.text(), MetricsThresholds(), INSTALLED)
    assert verdict.failures == [
        "dev5: trt_edge_bundle_info says the service serves tiny 1.0.0 (slot A), not the "
        "installed tiny 2.0.0"
    ]


def test_text_that_is_not_prometheus_format_fails_naming_the_device() -> None:
    verdict = judge("dev6", "<html>502 Bad Gateway</html>", Service().text(), MetricsThresholds())
    assert not verdict.ok and verdict.failures[0].startswith("dev6: /metrics: not Prometheus")


def test_histogram_quantile_edges() -> None:
    inf = float("inf")
    assert histogram_quantile(0.95, [(1.0, 0.0), (inf, 0.0)]) is None
    assert histogram_quantile(0.95, [(1.0, 0.0), (2.0, 0.0), (inf, 4.0)]) == 2.0
    assert histogram_quantile(0.5, [(1.0, 10.0), (inf, 10.0)]) == 0.5


def test_a_device_whose_metrics_cannot_be_fetched_fails_naming_the_url(tmp_path: Path) -> None:
    def report(raw: dict[str, Any]) -> MetricsReport:
        return decode_metrics_report(json.dumps({"host": "dev7", **raw}), "dev7.json")

    log = tmp_path / "wave-1-metrics.log"
    unreachable = metrics_verdict("dev7", None, MetricsThresholds(), INSTALLED, log)
    assert unreachable.failures == [f"dev7: no report from the device; see {log}"]
    refused = {
        "url": "http://127.0.0.1:8000/metrics",
        "status_0": "-1",
        "error_0": "Status code was -1 and not [200]: Request failed: <urlopen error "
        "[Errno 111] Connection refused>",
        "status_1": "-1",
    }
    verdict = metrics_verdict("dev7", report(refused), MetricsThresholds(), INSTALLED, log)
    assert verdict.failures == [
        "dev7: cannot scrape http://127.0.0.1:8000/metrics (HTTP -1: Status code was -1 and "
        "not [200]: Request failed: <urlopen error [Errno 111] Connection refused>); is "
        "`trt-edge-device serve` running there?"
    ]
    service = Service()
    first = service.text()
    service.serve("ok", 3)
    fetched = {"status_0": 200, "metrics_0": first, "status_1": 200, "metrics_1": service.text()}
    fetched["url"] = "http://127.0.0.1:8000/metrics"
    assert metrics_verdict("dev7", report(fetched), MetricsThresholds(), INSTALLED, log).ok


def test_a_metrics_report_that_is_not_one_fails_the_gate_naming_file_and_field(
    tmp_path: Path,
) -> None:
    path = tmp_path / "dev7.json"
    path.write_text(json.dumps({"host": "dev7", "url": "u", "status_0": 200}))
    report = read_report(path, decode_metrics_report)
    verdict = metrics_verdict("dev7", report, MetricsThresholds(), INSTALLED, tmp_path / "log")
    assert verdict.failures == [f"dev7: report refused: {path}: status_1: missing"]
