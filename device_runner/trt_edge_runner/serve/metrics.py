"""Every Prometheus metric the service exports, named here and nowhere else.

The fleet's rollout gate scrapes these names from a device's `/metrics`; renaming one
breaks it. Each service owns its registry (two services in one process, as in tests,
do not collide).
"""

from __future__ import annotations

from prometheus_client import CONTENT_TYPE_LATEST as CONTENT_TYPE
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

REQUESTS_TOTAL = "trt_edge_requests_total"
TIME_TO_FIRST_TOKEN = "trt_edge_time_to_first_token_seconds"
TIME_PER_OUTPUT_TOKEN = "trt_edge_time_per_output_token_seconds"
EXECUTE_SECONDS = "trt_edge_execute_seconds"
TOKENS_TOTAL = "trt_edge_tokens_total"
QUEUE_DEPTH = "trt_edge_queue_depth"
PROFILE_SWITCHES = "trt_edge_profile_switches_total"
RUNNER_RESTARTS = "trt_edge_runner_restarts_total"
BUNDLE_INFO = "trt_edge_bundle_info"

OUTCOMES = ("ok", "bad_request", "rejected", "deadline", "engine_error", "cancelled")
CONTENT_TYPE_LATEST = CONTENT_TYPE

# Edge latencies: sub-millisecond decode steps up to multi-second prompts.
_LATENCY_BUCKETS = (
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
)  # fmt: skip


class Metrics:
    """The service's metrics in their own registry."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        # prometheus_client appends `_total` to counters itself: declare them without it.
        self.requests = Counter(
            REQUESTS_TOTAL.removesuffix("_total"),
            "Requests by endpoint and how they ended.",
            ["endpoint", "outcome"],
            registry=r,
        )
        self.ttft = Histogram(
            TIME_TO_FIRST_TOKEN,
            "Time from a generation request's arrival to its first token.",
            buckets=_LATENCY_BUCKETS,
            registry=r,
        )
        self.tpot = Histogram(
            TIME_PER_OUTPUT_TOKEN,
            "Time per generated token after the first.",
            buckets=_LATENCY_BUCKETS,
            registry=r,
        )
        self.execute = Histogram(
            EXECUTE_SECONDS,
            "Engine executions (Module::execute) by phase and the profile they ran on.",
            ["phase", "profile"],
            buckets=_LATENCY_BUCKETS,
            registry=r,
        )
        self.tokens = Counter(
            TOKENS_TOTAL.removesuffix("_total"),
            "Tokens in (prompts) and out (generated).",
            ["direction"],
            registry=r,
        )
        self.queue_depth = Gauge(QUEUE_DEPTH, "Requests waiting for the engine.", registry=r)
        self.profile_switches = Counter(
            PROFILE_SWITCHES.removesuffix("_total"),
            "Executions whose profile differed from the engine's previous one.",
            registry=r,
        )
        self.restarts = Counter(
            RUNNER_RESTARTS.removesuffix("_total"),
            "Engine (trt-edge-run) restarts after it died.",
            registry=r,
        )
        self.bundle_info = Gauge(
            BUNDLE_INFO,
            "The bundle being served (1 per name, version and slot).",
            ["name", "version", "slot"],
            registry=r,
        )

    def request(self, endpoint: str, outcome: str) -> None:
        self.requests.labels(endpoint=endpoint, outcome=outcome).inc()

    def serving(self, name: str, version: str, slot: str) -> None:
        """Show only this bundle in `trt_edge_bundle_info`."""
        self.bundle_info.clear()
        self.bundle_info.labels(name=name, version=version, slot=slot).set(1)

    def render(self) -> bytes:
        return generate_latest(self.registry)
