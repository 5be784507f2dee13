"""The rollout plan: a YAML document a person reads and diffs, validated by pydantic.

    bundle: dist/tiny-2.0.0.tar        # signed bundle .tar (relative to this file)
    groups: [edge]                     # inventory groups; default: every host
    waves: [1, "10%", "50%", "100%"]   # cumulative: a count or a percentage of eligible devices
    health:
      max_latency_regression: 0.5      # fail a device 50 % slower than its install baseline
      runs: 15                         # timed runs per phase, judged by their median
      metrics:                         # optional: a gate on live traffic (the service's /metrics)
        port: 8000                     # scraped on the device: http://127.0.0.1:8000/metrics
        window_s: 300                  # scraped twice, this far apart, after the wave installs
        min_requests: 20               # fewer: error rate and latency not judged
        max_error_rate: 0.01           # engine_error + deadline over all requests
        max_ttft_p95_ms: 800           # p95 time to first token, from the histogram's buckets
        max_restarts: 0                # runner restarts (crashed engines)
    failure_threshold: 0               # stop before the next wave when failures exceed this
                                       # (a count, or "10%" of the devices attempted so far)
    on_halt: rollback_wave             # on a halt, also roll back the wave's updated devices
                                       # ("keep" leaves them on the new bundle)
    allow_downgrade: false             # true: a deliberate downgrade below devices' floors
                                       # (passes --allow-downgrade; recorded on each device)
    trust: [keys/2027.rotation.json]   # trust documents each device accepts (`trust add`)
                                       # before installing: rotations, revocation lists
    remote_dir: /var/tmp/trt-edge      # where the bundle is copied on each device
    device_cli: trt-edge-device
    forks: 10

`allow_downgrade` is the plan's explicit word for a deliberate downgrade: devices refuse
a version below the highest they have installed (anti-rollback) unless the install
says `--allow-downgrade`, and each device records that it was told so. `trust` lists
rotation statements and revocation lists (`trt-edge keys rotate|revoke`) that every
device accepts before it installs, so one rollout can move a fleet to a new key and
ship the first bundle signed by it. Errors name the plan file, the line and the field.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from trt_edge_runner.agent.config import DEFAULT_LATENCY_RUNS
from trt_edge_runner.json_documents import read_file_bytes

from trt_edge.fleet.errors import RolloutError
from trt_edge.fleet.metrics_gate import MetricsThresholds

_PERCENT = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*%\s*$")

WaveSpec = int | str


def parse_amount(value: WaveSpec, what: str) -> tuple[str, float]:
    """("count", n) or ("percent", p) from `3` or `"10%"`; ValueError naming `what`."""
    if isinstance(value, bool):
        raise ValueError(f"{what}: expected a count or a percentage like '10%', got {value!r}")
    if isinstance(value, int):
        if value < 0:
            raise ValueError(f"{what}: a count cannot be negative ({value})")
        return ("count", float(value))
    match = _PERCENT.match(value)
    if not match:
        raise ValueError(f"{what}: expected a count or a percentage like '10%', got {value!r}")
    percent = float(match.group(1))
    if percent > 100:
        raise ValueError(f"{what}: {value} is more than 100%")
    return ("percent", percent)


class MetricsGate(BaseModel):
    """`health.metrics`: the live-traffic gate (`trt_edge.fleet.metrics_gate`). After a wave
    installs, each updated device's service `/metrics` is scraped twice, `window_s` apart,
    on the device (`http://127.0.0.1:PORT/PATH`; an inventory host var
    `trt_edge_metrics_url` overrides it per device); a device over a threshold fails."""

    model_config = ConfigDict(extra="forbid")

    port: Annotated[int, Field(ge=1, le=65535)] = 8000  # `trt-edge-device serve`'s default
    path: str = "/metrics"
    window_s: Annotated[float, Field(gt=0, le=86400)] = 60.0
    min_requests: Annotated[int, Field(ge=0)] = 1
    max_error_rate: Annotated[float, Field(ge=0, le=1)] | None = 0.01
    max_ttft_p95_ms: Annotated[float, Field(gt=0)] | None = None
    max_restarts: Annotated[int, Field(ge=0)] | None = 0
    require_traffic: bool = False  # fewer than min_requests in the window fails the device

    def thresholds(self) -> MetricsThresholds:
        """What the gate judges (`metrics_gate.judge`), whoever scraped the two windows."""
        return MetricsThresholds(
            min_requests=self.min_requests,
            max_error_rate=self.max_error_rate,
            max_ttft_p95_ms=self.max_ttft_p95_ms,
            max_restarts=self.max_restarts,
            require_traffic=self.require_traffic,
        )

    @field_validator("path")
    @classmethod
    def _path(cls, value: str) -> str:
        if not value.startswith("/"):
            raise ValueError(f"expected a URL path starting with '/', got {value!r}")
        return value


class HealthGate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    max_latency_regression: Annotated[float, Field(ge=0)] = 0.5
    # As many runs as the install's baseline: a median of a few runs is noise (issue 31).
    runs: Annotated[int, Field(ge=1, le=100)] = DEFAULT_LATENCY_RUNS
    metrics: MetricsGate | None = None  # the live-traffic gate; None: smoke runs only


class RolloutPlan(BaseModel):
    model_config = ConfigDict(extra="forbid")

    bundle: Path
    groups: list[str] = Field(default_factory=lambda: ["all"])
    waves: list[WaveSpec] = Field(default_factory=lambda: list[WaveSpec](["100%"]), min_length=1)
    health: HealthGate = Field(default_factory=HealthGate)
    failure_threshold: WaveSpec = 0
    on_halt: Literal["rollback_wave", "keep"] = "rollback_wave"
    allow_downgrade: bool = False
    trust: list[Path] = Field(default_factory=list)
    remote_dir: str = "/var/tmp/trt-edge"
    device_cli: str = "trt-edge-device"
    forks: Annotated[int, Field(ge=1, le=500)] = 10

    @field_validator("waves")
    @classmethod
    def _waves(cls, waves: list[WaveSpec]) -> list[WaveSpec]:
        for i, wave in enumerate(waves):
            parse_amount(wave, f"wave {i + 1}")
        return waves

    @field_validator("failure_threshold")
    @classmethod
    def _threshold(cls, value: WaveSpec) -> WaveSpec:
        parse_amount(value, "failure_threshold")
        return value


def _line_of(node: Any, path: tuple[Any, ...]) -> int | None:
    """1-based line of the YAML node at `path` (or of its closest parent), for messages."""
    import yaml

    line = node.start_mark.line + 1 if node is not None else None
    for key in path:
        if isinstance(node, yaml.MappingNode):
            match = next((v for k, v in node.value if k.value == key), None)
        elif isinstance(node, yaml.SequenceNode) and isinstance(key, int) and key < len(node.value):
            match = node.value[key]
        else:
            match = None
        if match is None:
            break
        node = match
        line = node.start_mark.line + 1
    return line


def load_plan(path: Path) -> RolloutPlan:
    """Read and validate `path`; RolloutError lists every problem as FILE:LINE: field: message."""
    import yaml

    text = read_file_bytes(path, "rollout plan", RolloutError).decode("utf-8")
    try:
        doc = yaml.safe_load(text)
        root = yaml.compose(text)
    except yaml.YAMLError as exc:
        raise RolloutError(f"{path}: not valid YAML: {exc}") from None
    if not isinstance(doc, dict):
        raise RolloutError(f"{path}: a rollout plan is a mapping with at least `bundle:`")
    try:
        plan = RolloutPlan.model_validate(doc)
    except ValidationError as exc:
        lines = []
        for err in exc.errors():
            loc = tuple(err["loc"])
            field = ".".join(str(p) for p in loc) or "(top)"
            line = _line_of(root, loc)
            lines.append(f"{path}:{line}: {field}: {err['msg']}")
        raise RolloutError("invalid rollout plan:\n  " + "\n  ".join(lines)) from None
    if not plan.bundle.is_absolute():
        plan = plan.model_copy(update={"bundle": (path.parent / plan.bundle).resolve()})
    trust = [p if p.is_absolute() else (path.parent / p).resolve() for p in plan.trust]
    missing = [p for p in trust if not p.is_file()]
    if missing:
        raise RolloutError(
            f"{path}: trust: {', '.join(map(str, missing))}: no such file "
            "(a rotation statement or revocation list from `trt-edge keys`)"
        )
    names = [p.name for p in trust]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise RolloutError(
            f"{path}: trust: {', '.join(twice)} named twice; devices receive the files by name"
        )
    return plan.model_copy(update={"trust": trust})
