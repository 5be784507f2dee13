"""Where the agent keeps things on a device, and the device-local settings it honours.

Defaults follow the Filesystem Hierarchy Standard: state under `/var/lib/trt-edge`,
configuration under `/etc/trt-edge`. Every path can be moved by a flag or an
environment variable, so a BSP rootfs, a container or a test can host an agent.

`device.json` holds settings an operator sets per device, e.g.::

    {"health": {"max_latency_regression": 0.5, "latency_budget_ms": 40.0,
                "latency_noise_ms": 1.0, "latency_spread_factor": 3.0},
     "runner": "/opt/trt-edge/runner/bin/trt-edge-run", "runner_timeout_s": 600,
     "engine": "cpp"}

`health` fails a phase whose median is slower than its install baseline by more
than the largest of: `max_latency_regression` x the baseline (0.5: 50 %),
`latency_spread_factor` x the spread of the phase's install runs, and
`latency_noise_ms`, an absolute floor (default 1 ms: a sub-millisecond slowdown
never fails; see `agent/latency.py` for why each term is there).
`latency_budget_ms` is an absolute per-phase budget for devices with a hard
real-time limit. Install and health both time `DEFAULT_LATENCY_RUNS` runs per phase
after `DEFAULT_WARMUP_RUNS` untimed ones (`--smoke-runs`, `--runs` change the count).

Bundles execute in the C++ runner `trt-edge-run`, run as a child process. It is
found, first place that names one wins: `--runner PATH`, `$TRT_EDGE_RUNNER`,
device.json `runner`, then `trt-edge-run` on `PATH`. A place that names a runner
which is not there or not executable is an error naming that place (never a
silent fall-through to another runner); nothing found is an error naming every
place looked. `engine: "python"` (or `--engine python`) runs bundles in-process
with ExecuTorch's Python runtime instead, where it is installed: an explicit
opt-in, never a fallback taken on its own.
"""

from __future__ import annotations

import argparse
import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from trt_edge_runner.agent.errors import AgentConfigError, RunnerNotFound
from trt_edge_runner.schemas import read_document

DEFAULT_ROOT = Path("/var/lib/trt-edge")
DEFAULT_KEYS = Path("/etc/trt-edge/keys")
DEFAULT_FACTS = Path("/etc/trt-edge/facts.json")
DEFAULT_CONFIG = Path("/etc/trt-edge/device.json")

DEFAULT_MAX_REGRESSION = 0.5
# The absolute floor: the C++ runner times microsecond-scale phases, where a thread
# descheduled on a busy core costs more than the model (measured: a 0.021 ms phase taking
# 0.318 ms at load 1.7 on two cores), and no fraction of such a baseline is a regression.
DEFAULT_LATENCY_NOISE_MS = 1.0
DEFAULT_SPREAD_FACTOR = 3.0  # x the install runs' median absolute deviation (~2 sigma)
# Timed runs per phase, at install (the baseline) and in health alike, after the untimed
# warm-up runs (the first run of a phase packs weights and fills caches: up to 60x slower).
DEFAULT_LATENCY_RUNS = 15
DEFAULT_WARMUP_RUNS = 2

RUNNER_ENV = "TRT_EDGE_RUNNER"
RUNNER_COMMAND = "trt-edge-run"
ENGINES = ("cpp", "python")
DEFAULT_EXECUTOR = "cpp"
DEFAULT_RUNNER_TIMEOUT_S = 600.0


@dataclass(frozen=True)
class HealthSettings:
    max_latency_regression: float = DEFAULT_MAX_REGRESSION
    latency_budget_ms: float | None = None
    latency_noise_ms: float = DEFAULT_LATENCY_NOISE_MS
    latency_spread_factor: float = DEFAULT_SPREAD_FACTOR


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
    add_config_argument(parser)


def add_config_argument(parser: argparse.ArgumentParser) -> None:
    """`--config`: the device settings file (device.json), default its TRT_EDGE_CONFIG."""
    parser.add_argument(
        "--config",
        type=Path,
        default=Path(os.environ.get("TRT_EDGE_CONFIG", DEFAULT_CONFIG)),
        help=f"device settings (env TRT_EDGE_CONFIG, default {DEFAULT_CONFIG} when present)",
    )


@dataclass(frozen=True)
class RunnerSettings:
    """device.json's choice of executor (its `engine` key: cpp or python), its `runner` path
    and the child's time limit."""

    executor: str = DEFAULT_EXECUTOR
    runner: str | None = None
    timeout_s: float = DEFAULT_RUNNER_TIMEOUT_S


@dataclass(frozen=True)
class FoundRunner:
    """A `trt-edge-run` binary and the place that named it (for every later message)."""

    path: Path
    found_by: str

    def __str__(self) -> str:
        return f"{self.path} (from {self.found_by})"


def add_runner_arguments(parser: argparse.ArgumentParser, default_executor: str) -> None:
    """`--engine` and `--runner`: which engine executes bundles, and where trt-edge-run is."""
    parser.add_argument(
        "--engine",
        choices=ENGINES,
        default=None,
        help=f"cpp: the C++ runner trt-edge-run as a child process; python: ExecuTorch's "
        f"Python runtime in this process, where installed (default: device.json engine, "
        f"else {default_executor})",
    )
    parser.add_argument(
        "--runner",
        type=Path,
        default=None,
        metavar="PATH",
        help=f"the trt-edge-run binary (else ${RUNNER_ENV}, device.json runner, PATH)",
    )


@dataclass(frozen=True)
class DeviceConfig:
    """device.json as the agent uses it: the health gate's limits and how bundles run."""

    health: HealthSettings = HealthSettings()
    runner: RunnerSettings = RunnerSettings()


def _config_error(message: str, field: str) -> AgentConfigError:
    return AgentConfigError(message)


def decode_device_config(path: Path) -> DeviceConfig:
    """device.json, held to `device-config.schema.json`; defaults when the file does not
    exist. The one reader of the file: `health`, `install`, the runner's discovery and the
    service all read their settings from this, so one bad value is refused by every
    command alike (AgentConfigError naming the file and the field, exit 2)."""
    if not path.exists():
        return DeviceConfig()
    doc = read_document("device-config", path, "device config", _config_error)
    health = doc.get("health", {})
    regression = health.get("max_latency_regression")
    budget = health.get("latency_budget_ms")
    noise = health.get("latency_noise_ms")
    spread = health.get("latency_spread_factor")
    timeout = doc.get("runner_timeout_s", DEFAULT_RUNNER_TIMEOUT_S)
    return DeviceConfig(
        health=HealthSettings(
            max_latency_regression=(
                DEFAULT_MAX_REGRESSION if regression is None else float(regression)
            ),
            latency_budget_ms=None if budget is None else float(budget),
            latency_noise_ms=DEFAULT_LATENCY_NOISE_MS if noise is None else float(noise),
            latency_spread_factor=DEFAULT_SPREAD_FACTOR if spread is None else float(spread),
        ),
        runner=RunnerSettings(
            executor=doc.get("engine", DEFAULT_EXECUTOR),
            runner=doc.get("runner"),
            timeout_s=float(timeout),
        ),
    )


def load_health_settings(path: Path) -> HealthSettings:
    """The `health` block of the device config; defaults when the file does not exist."""
    return decode_device_config(path).health


def load_runner_settings(path: Path) -> RunnerSettings:
    """`engine`, `runner` and `runner_timeout_s` of the device config; defaults when absent."""
    return decode_device_config(path).runner


def which(command: str, search_path: str) -> Path | None:
    """`command` in the first directory of `search_path` (PATH syntax) that has it as an
    executable file, as a shell finds it."""
    found = shutil.which(command, path=search_path)
    return Path(found) if found else None


def _unusable(path: Path) -> str | None:
    """Why `path` cannot be started as the runner, or None."""
    if not path.exists():
        return "no such file"
    if path.is_dir():
        return "is a directory, not the trt-edge-run binary"
    if not os.access(path, os.X_OK):
        return "is not executable (chmod +x it, or point at the unpacked tarball's bin/)"
    return None


def find_runner(
    option: Path | None,
    config_path: Path,
    settings: RunnerSettings,
    env: Mapping[str, str] | None = None,
) -> FoundRunner:
    """The runner the first place names (`--runner`, `$TRT_EDGE_RUNNER`, device.json
    `runner`, PATH), or RunnerNotFound naming every place looked."""
    env = os.environ if env is None else env
    looked: list[str] = []
    named = (
        ("--runner", None if option is None else str(option)),
        (f"${RUNNER_ENV}", env.get(RUNNER_ENV) or None),
        (f"{config_path} runner", settings.runner),
    )
    for place, value in named:
        if value is None:
            absent = place.startswith(str(config_path)) and not config_path.exists()
            looked.append(f"{place}: not set" + (" (no such file)" if absent else ""))
            continue
        path = Path(value)
        if "/" not in value:  # a bare command name: looked up on PATH, like a shell would
            path = which(value, env.get("PATH", os.defpath)) or path
        problem = _unusable(path)
        if problem is not None:
            raise RunnerNotFound(
                f"{place} names {value}, which cannot be used: {problem}"
                + ("" if not looked else " (before it, " + "; ".join(looked) + ")"),
                hint=_RUNNER_HINT,
            )
        return FoundRunner(path.absolute(), place)
    search_path = env.get("PATH", "")
    found = which(RUNNER_COMMAND, search_path) if search_path else None
    if found:
        return FoundRunner(found.absolute(), "PATH")
    looked.append(f"PATH ({search_path or 'empty'}): no {RUNNER_COMMAND}")
    raise RunnerNotFound(
        f"{RUNNER_COMMAND} (the C++ runner that executes bundles) not found; looked at:\n  "
        + "\n  ".join(looked),
        hint=_RUNNER_HINT,
    )


_RUNNER_HINT = (
    "unpack the runner tarball for this machine (trt-edge-runner-<version>-linux-<arch>.tar.gz, "
    "`make device-<arch>`) and pass --runner DIR/bin/trt-edge-run, set TRT_EDGE_RUNNER, add "
    '"runner" to device.json or put DIR/bin on PATH; or, where ExecuTorch\'s Python runtime is '
    "installed, choose it explicitly with --engine python"
)
