"""Where the agent keeps things on a device, and the device-local settings it honours.

Defaults follow the Filesystem Hierarchy Standard: state under `/var/lib/trt-edge`,
configuration under `/etc/trt-edge`. Every path can be moved by a flag or an
environment variable, so a BSP rootfs, a container or a test can host an agent.

`device.json` holds settings an operator sets per device, e.g.::

    {"health": {"max_latency_regression": 0.5, "latency_budget_ms": 40.0}}

`max_latency_regression` 0.5 fails `health` when a phase is 50 % slower than the
baseline measured at install; `latency_budget_ms` is an absolute per-phase
budget for devices with a hard real-time limit.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trt_edge_runner.agent.errors import AgentConfigError
from trt_edge_runner.json_documents import parse_json_object

DEFAULT_ROOT = Path("/var/lib/trt-edge")
DEFAULT_KEYS = Path("/etc/trt-edge/keys")
DEFAULT_FACTS = Path("/etc/trt-edge/facts.json")
DEFAULT_CONFIG = Path("/etc/trt-edge/device.json")

DEFAULT_MAX_REGRESSION = 0.5


@dataclass(frozen=True)
class HealthSettings:
    max_latency_regression: float = DEFAULT_MAX_REGRESSION
    latency_budget_ms: float | None = None


def add_location_arguments(parser: argparse.ArgumentParser) -> None:
    """`--root/--keys/--facts/--config`, each defaulting to its TRT_EDGE_* variable."""
    env = os.environ
    parser.add_argument(
        "--root",
        type=Path,
        default=Path(env.get("TRT_EDGE_ROOT", DEFAULT_ROOT)),
        help=f"agent state directory (env TRT_EDGE_ROOT, default {DEFAULT_ROOT})",
    )
    parser.add_argument(
        "--keys",
        type=Path,
        default=Path(env.get("TRT_EDGE_KEYS", DEFAULT_KEYS)),
        help=f"trusted public keys directory (env TRT_EDGE_KEYS, default {DEFAULT_KEYS})",
    )
    parser.add_argument(
        "--facts",
        type=Path,
        default=Path(env.get("TRT_EDGE_FACTS", DEFAULT_FACTS)),
        help=(
            "JSON file overriding detected device facts (arch, sm, jetpack, l4t, cuda, "
            f"tensorrt); env TRT_EDGE_FACTS, default {DEFAULT_FACTS} when present"
        ),
    )
    parser.add_argument(
        "--config",
        type=Path,
        default=Path(env.get("TRT_EDGE_CONFIG", DEFAULT_CONFIG)),
        help=f"device settings (env TRT_EDGE_CONFIG, default {DEFAULT_CONFIG} when present)",
    )


def read_json_object(path: Path, what: str) -> dict[str, Any]:
    """A JSON object from `path`, or AgentConfigError naming the file and the problem."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise AgentConfigError(f"{path}: cannot read {what}: {exc.strerror}") from None
    return parse_json_object(data, str(path), what, AgentConfigError)


def load_health_settings(path: Path) -> HealthSettings:
    """The `health` block of the device config; defaults when the file does not exist."""
    if not path.exists():
        return HealthSettings()
    health = read_json_object(path, "device config").get("health", {})
    if not isinstance(health, dict):
        raise AgentConfigError(f"{path}: health: expected an object")
    values: dict[str, float | None] = {}
    for key in ("max_latency_regression", "latency_budget_ms"):
        value = health.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            raise AgentConfigError(
                f"{path}: health.{key}: expected a non-negative number, got {value!r}"
            )
        values[key] = float(value)
    regression = values.get("max_latency_regression")
    return HealthSettings(
        max_latency_regression=DEFAULT_MAX_REGRESSION if regression is None else regression,
        latency_budget_ms=values.get("latency_budget_ms"),
    )
