"""What the link reports as the device's state: gathered from the agent's own files.

The active bundle and the rollback target come from `state.json` (through the agent's
`DeviceStore.load`, the one reader), what the device was told from `desired.json`, and —
when a service runs — the serve metrics the fleet's health gate reads, scraped from the
local service's `/metrics` and cut to the gate's families (the operator side parses them
with the gate's own parser, `fleet/metrics_gate.py`). A state file that does not decode is
reported (`agent_error`), never a crash of the link.

Standard library only: this module ships to devices.
"""

from __future__ import annotations

import datetime
import urllib.error
import urllib.request
from dataclasses import dataclass

from trt_edge_runner.agent.store import DeviceStore
from trt_edge_runner.errors import TrtEdgeError
from trt_edge_runner.link.desired import read_desired
from trt_edge_runner.link.documents import DeviceState, HealthSummary

# The metric families the fleet's live-traffic gate reads (sdk/trt_edge/fleet/metrics_gate.py;
# a test holds the two lists together).
GATE_FAMILIES = (
    "trt_edge_requests_total",
    "trt_edge_time_to_first_token_seconds",
    "trt_edge_runner_restarts_total",
    "trt_edge_bundle_info",
)
# A scrape larger than this is not a trt-edge service's /metrics; the state stays small.
MAX_METRICS_BYTES = 256 * 1024


def now() -> str:
    """The time, as RFC 3339 in UTC (what every link document carries)."""
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def _family_of(line: str) -> str:
    """The metric name a line of Prometheus text is about (`# TYPE x counter` → x)."""
    if line.startswith("#"):
        words = line.split()
        return words[2] if len(words) > 2 else ""
    return line.split("{", 1)[0].split(" ", 1)[0]


# prometheus_client declares a counter without `_total` (its HELP/TYPE lines and `_created`
# sample say `trt_edge_requests`): match every family by its base name.
_GATE_BASES = tuple(family.removesuffix("_total") for family in GATE_FAMILIES)


def gate_lines(text: str) -> str:
    """The lines of a scrape that belong to the gate's families (with their HELP/TYPE)."""
    kept = [line for line in text.splitlines() if _family_of(line).startswith(_GATE_BASES)]
    return "\n".join(kept) + "\n" if kept else ""


@dataclass(frozen=True)
class Scraped:
    """One scrape of the local service: the gate's lines, or why there are none."""

    metrics: str | None
    error: str | None


def scrape_metrics(url: str, timeout_s: float = 5.0) -> Scraped:
    """GET `url` (the local service's /metrics) and keep the gate's families."""
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as response:
            body = response.read(MAX_METRICS_BYTES + 1)
    except (urllib.error.URLError, OSError, ValueError) as exc:
        return Scraped(None, f"{url}: cannot scrape: {getattr(exc, 'reason', exc)}")
    if len(body) > MAX_METRICS_BYTES:
        return Scraped(None, f"{url}: more than {MAX_METRICS_BYTES} bytes: not a trt-edge service")
    return Scraped(gate_lines(body.decode("utf-8", errors="replace")), None)


def gather_state(
    device: str, store: DeviceStore, health: HealthSummary | None, scraped: Scraped | None
) -> DeviceState:
    """The device's state now, from the agent's files, the last health check and scrape."""
    name = version = slot = previous_version = None
    agent_error = None
    desired = None
    try:
        state = store.load()
        active, previous = state.info(state.active), state.info(state.previous)
        slot = state.active
        if active is not None:
            name, version = active.name, active.version
        if previous is not None:
            previous_version = previous.version
        desired = read_desired(store.root).to_dict()
    except TrtEdgeError as exc:
        agent_error = str(exc)
    return DeviceState(
        device=device,
        name=name,
        version=version,
        slot=slot,
        previous_version=previous_version,
        at=now(),
        health=health,
        metrics=None if scraped is None else scraped.metrics,
        metrics_error=None if scraped is None else scraped.error,
        desired=desired,
        agent_error=agent_error,
    )
