"""`trt-edge-device info [BUNDLE] [--json]`: what this device's runner can do.

Reports the engine bundles run on, the C++ runner trt-edge-run (where it was
found, its version, architecture, ExecuTorch version, registered backends and
whether it has the native TensorRT profile guard: a multi-profile TensorRT
bundle runs profile 0 only without it), and the Python packages installed (read
from their metadata: nothing is imported). With a bundle: checks and loads it
(`trt-edge-run load`, nothing executes), then shows its mode, phases, profiles
and whether it runs profile 0 only. `--engine python` asks ExecuTorch's Python
runtime instead (it imports torch).
"""

from __future__ import annotations

import argparse
import json
import platform
from importlib import metadata
from pathlib import Path
from typing import Any

from trt_edge_runner import __version__
from trt_edge_runner.actuator import NATIVE_PROFILE_GUARD, WHERE_THE_NATIVE_SWITCH_LIVES
from trt_edge_runner.agent.config import add_config_argument, add_runner_arguments
from trt_edge_runner.agent.memory_check import needs_line
from trt_edge_runner.agent.smoke import executor_name, open_runner
from trt_edge_runner.bundle_format import BUNDLE_JSON, BundleManifest, MemorySection
from trt_edge_runner.cli_args import add_json_argument, require_dir
from trt_edge_runner.cli_shell import Command
from trt_edge_runner.commands.run import configure_logging
from trt_edge_runner.errors import TrtEdgeError
from trt_edge_runner.memory_budget import MemInfoError, mib
from trt_edge_runner.memory_budget import device_memory as measured
from trt_edge_runner.runner import Runner


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "bundle", nargs="?", type=Path, help="also load this bundle and show its mode"
    )
    add_json_argument(parser)
    add_runner_arguments(parser, default_executor="cpp")
    add_config_argument(parser)


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def package_facts() -> dict[str, Any]:
    """This agent and the Python packages around it, from metadata only (no imports)."""
    return {
        "agent": __version__,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "executorch": _version("executorch"),
        "torch": _version("torch"),
        "numpy": _version("numpy"),
        "cryptography": _version("cryptography"),
        "torch_tensorrt": _version("torch_tensorrt") or _version("torch-tensorrt"),
    }


def cpp_runner_facts(args: argparse.Namespace) -> dict[str, Any]:
    """The C++ runner's own facts (`trt-edge-run --version --json`), or why there are none."""
    try:
        runner = open_runner(args)
    except TrtEdgeError as exc:
        return {"error": str(exc)}
    return {"path": str(runner.path), "found_by": runner.found.found_by, **runner.facts}


def python_runtime_facts() -> dict[str, Any]:
    """ExecuTorch's Python runtime: its registered backends (imports torch)."""
    facts: dict[str, Any] = {
        "native_profile_guard": NATIVE_PROFILE_GUARD,
        "native_profile_guard_note": WHERE_THE_NATIVE_SWITCH_LIVES,
    }
    try:
        from executorch.runtime import Runtime

        facts["backends"] = sorted(Runtime.get().backend_registry.registered_backend_names)
    except ImportError as exc:
        facts["backends"] = []
        facts["error"] = f"ExecuTorch runtime not importable: {exc}"
    return facts


def device_memory() -> dict[str, Any]:
    """This device's memory (`/proc/meminfo`, capped by a container's limit), or why it
    cannot be read."""
    try:
        found = measured()
    except MemInfoError as exc:
        return {"error": str(exc)}
    return {
        "total_bytes": found.total_bytes,
        "available_bytes": found.available_bytes,
        "source": found.source,
    }


def bundle_memory(bundle: Path, peak_rss_bytes: Any) -> dict[str, Any] | None:
    """The bundle's recorded needs (`bundle.json` `memory`) and the runner's measured peak
    RSS with it loaded (`peak_rss_bytes` of `trt-edge-run load --json`, when the runner
    reports it); None when the bundle records no needs and nothing was measured."""
    memory = BundleManifest.from_json((bundle / BUNDLE_JSON).read_bytes()).memory
    measured = peak_rss_bytes if isinstance(peak_rss_bytes, int) else None
    if memory is None and measured is None:
        return None
    return {"needs": memory.to_dict() if memory else None, "peak_rss_bytes": measured}


def describe_bundle(args: argparse.Namespace, engine: str) -> dict[str, Any]:
    if engine == "python":
        described: dict[str, Any] = Runner.open(args.bundle).describe()
        described["memory"] = bundle_memory(args.bundle, None)
        return described
    doc = open_runner(args, probe=False).load(args.bundle)  # its document is checked
    return {
        "bundle": str(args.bundle),
        "model": doc["model"],
        "mode": doc["mode"],
        "profile0_only": doc["profile0_only"],
        "phases": doc["phases"],
        "profiles": doc["profiles"],
        "backends_registered": doc["runner"]["backends"],
        "memory": bundle_memory(args.bundle, doc.get("peak_rss_bytes")),
    }


def device_memory_line(device: dict[str, Any]) -> str:
    """`info`'s line for this device's memory."""
    if "error" in device:
        return f"  memory: {device['error']}"
    available = device["available_bytes"]
    free = f", {mib(available)} available" if available is not None else ""
    source = device.get("source", "/proc/meminfo")
    return f"  memory: {mib(device['total_bytes'])} total{free} ({source})"


def bundle_memory_lines(bundle: dict[str, Any]) -> list[str]:
    """`info`'s lines for a bundle's recorded needs and the runner's measured peak RSS."""
    lines = []
    memory = bundle.get("memory")
    needs = memory["needs"] if memory else None
    lines.append(
        f"  needs: {needs_line(MemorySection(**needs))}"
        if needs
        else "  needs: not recorded (bundle built before bundle.json had a memory section)"
    )
    measured = memory["peak_rss_bytes"] if memory else None
    lines.append(
        f"  runner peak RSS with the bundle loaded: {mib(measured)}"
        if measured is not None
        else "  runner peak RSS with the bundle loaded: not reported by this runner"
    )
    return lines


def run(args: argparse.Namespace) -> int:
    configure_logging(args.command_prog)
    if args.bundle is not None:
        require_dir(args.bundle, "bundle directory")
    engine = executor_name(args)
    report: dict[str, Any] = {
        "device": {
            **package_facts(),
            "engine": engine,
            "runner": cpp_runner_facts(args) if engine == "cpp" else python_runtime_facts(),
            "memory": device_memory(),
        }
    }
    if args.bundle is not None:
        report["bundle"] = describe_bundle(args, engine)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    device = report["device"]
    print(f"trt-edge-runner {device['agent']} (Python {device['python']}, {device['machine']})")
    runner = device["runner"]
    if engine == "cpp":
        if "error" in runner:
            print(f"  engine cpp: {runner['error']}")
        else:
            guard = "yes" if runner["native_profile_guard"] else "no"
            print(
                f"  engine cpp: trt-edge-run {runner['version']} ({runner['arch']}, ExecuTorch "
                f"{runner['executorch']}) at {runner['path']} (from {runner['found_by']})"
            )
            print(f"  backends registered: {', '.join(runner['backends']) or 'none'}")
            print(
                f"  native TensorRT profile guard: {guard} → multi-profile TensorRT bundles run "
                f"{'native' if runner['native_profile_guard'] else 'profile 0 only'}, "
                "CPU bundles emulated"
            )
    else:
        print(f"  engine python: backends registered: {', '.join(runner['backends']) or 'none'}")
        print(f"  ({runner['native_profile_guard_note']})")
        if "error" in runner:
            print(f"  {runner['error']}")
    for package in ("executorch", "torch", "numpy", "cryptography", "torch_tensorrt"):
        print(f"  {package}: {device[package] or 'not installed'}")
    print(device_memory_line(device["memory"]))
    if "bundle" in report:
        b = report["bundle"]
        phases = ", ".join(f"{k}→{v}" for k, v in b["phases"].items())
        print(f"bundle {b['bundle']}: {b['model']['name']} {b['model']['version']}")
        print(f"  mode: {b['mode']}{' (profile 0 only)' if b['profile0_only'] else ''}")
        print(f"  profiles: {', '.join(f'{i} {n}' for i, n in enumerate(b['profiles']))}")
        print(f"  phases: {phases}")
        for line in bundle_memory_lines(b):
            print(line)
    return 0


COMMAND = Command(
    "show the engine, the C++ runner's versions and backends, and a bundle's mode",
    add_arguments=add_arguments,
    run=run,
)
