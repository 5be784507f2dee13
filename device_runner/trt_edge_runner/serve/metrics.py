"""Every Prometheus metric the service exports, named here and nowhere else.

The fleet's rollout gate scrapes these names from a device's `/metrics`; renaming one
breaks it. Each service owns its registry (two services in one process, as in tests,
do not collide).
"""

from __future__ import annotations

import contextlib
from typing import Any

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
MODEL_RESIDENT = "trt_edge_model_resident"
MODEL_LOADS = "trt_edge_model_loads_total"
MODEL_UNLOADS = "trt_edge_model_unloads_total"

OUTCOMES = ("ok", "bad_request", "rejected", "deadline", "engine_error", "cancelled")
CONTENT_TYPE_LATEST = CONTENT_TYPE

# Edge latencies: sub-millisecond decode steps up to multi-second prompts.
_LATENCY_BUCKETS = (
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
)  # fmt: skip


class Metrics:
    """The service's metrics in their own registry. Every series about a model's work
    carries a `model` label (the bundle's name; "" for a request refused before a model was
    chosen): a service may serve several models (`serve.model_set`)."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        # prometheus_client appends `_total` to counters itself: declare them without it.
        self.requests = Counter(
            REQUESTS_TOTAL.removesuffix("_total"),
            "Requests by model, endpoint and how they ended.",
            ["model", "endpoint", "outcome"],
            registry=r,
        )
        self.ttft = Histogram(
            TIME_TO_FIRST_TOKEN,
            "Time from a generation request's arrival to its first token.",
            ["model"],
            buckets=_LATENCY_BUCKETS,
            registry=r,
        )
        self.tpot = Histogram(
            TIME_PER_OUTPUT_TOKEN,
            "Time per generated token after the first.",
            ["model"],
            buckets=_LATENCY_BUCKETS,
            registry=r,
        )
        self.execute = Histogram(
            EXECUTE_SECONDS,
            "Engine executions (Module::execute) by model, phase and the profile they ran on.",
            ["model", "phase", "profile"],
            buckets=_LATENCY_BUCKETS,
            registry=r,
        )
        self.tokens = Counter(
            TOKENS_TOTAL.removesuffix("_total"),
            "Tokens in (prompts) and out (generated).",
            ["model", "direction"],
            registry=r,
        )
        self.queue_depth = Gauge(
            QUEUE_DEPTH, "Requests waiting for the model's engine.", ["model"], registry=r
        )
        self.profile_switches = Counter(
            PROFILE_SWITCHES.removesuffix("_total"),
            "Executions whose profile differed from the engine's previous one.",
            ["model"],
            registry=r,
        )
        self.restarts = Counter(
            RUNNER_RESTARTS.removesuffix("_total"),
            "Engine (trt-edge-run) restarts after it died.",
            ["model"],
            registry=r,
        )
        self.bundle_info = Gauge(
            BUNDLE_INFO,
            "The bundles being served (1 per name, version and slot of each loaded model).",
            ["name", "version", "slot"],
            registry=r,
        )
        self.resident = Gauge(
            MODEL_RESIDENT,
            "1 while the model is loaded (its engine in memory), 0 while it is not.",
            ["model"],
            registry=r,
        )
        self.loads = Counter(
            MODEL_LOADS.removesuffix("_total"),
            "Loads of a model (at start, on demand, by a hot swap).",
            ["model"],
            registry=r,
        )
        self.unloads = Counter(
            MODEL_UNLOADS.removesuffix("_total"),
            "Unloads of a model to make room for another under the memory budget.",
            ["model"],
            registry=r,
        )

    def request(self, model: str, endpoint: str, outcome: str) -> None:
        self.requests.labels(model=model, endpoint=endpoint, outcome=outcome).inc()

    def model(self, name: str) -> ModelMetrics:
        """The series of one model, as its `LoadedModel` records them."""
        return ModelMetrics(self, name)

    def loaded(self, name: str, version: str, slot: str) -> None:
        """A model's engine is serving: in `trt_edge_bundle_info` and resident."""
        self.bundle_info.labels(name=name, version=version, slot=slot).set(1)
        self.resident.labels(model=name).set(1)
        self.loads.labels(model=name).inc()

    def gone(self, name: str, version: str, slot: str) -> None:
        """A model's engine stopped (swapped out or unloaded): out of `trt_edge_bundle_info`."""
        with contextlib.suppress(KeyError):
            self.bundle_info.remove(name, version, slot)
        self.resident.labels(model=name).set(0)

    def render(self) -> bytes:
        return generate_latest(self.registry)


class _Labelled:
    """A labelled metric with the `model` label already given (`.labels(phase=...)`)."""

    def __init__(self, metric: Histogram | Counter, model: str) -> None:
        self._metric = metric
        self._model = model

    def labels(self, **labels: str) -> Any:
        return self._metric.labels(model=self._model, **labels)


class ModelMetrics:
    """One model's view of the service's metrics: the same attributes a `LoadedModel`
    records into, each bound to `model=<name>`."""

    def __init__(self, metrics: Metrics, name: str) -> None:
        self.name = name
        self.ttft = metrics.ttft.labels(model=name)
        self.tpot = metrics.tpot.labels(model=name)
        self.execute = _Labelled(metrics.execute, name)
        self.tokens = _Labelled(metrics.tokens, name)
        self.queue_depth = metrics.queue_depth.labels(model=name)
        self.profile_switches = metrics.profile_switches.labels(model=name)
        self.restarts = metrics.restarts.labels(model=name)
