"""`trt-edge-device info [BUNDLE] [--json]`: what this device's runner can do.

Reports the runner and runtime versions, the ExecuTorch backends registered,
and the mode a bundle runs in: this Python runner has no native TensorRT profile
guard (upstream's is C++ only; the native switch lives in the C++ runner
`trt-edge-run`), so a multi-profile TensorRT bundle runs profile 0 only here.
With a bundle: verifies and loads it, then shows its mode, phases, profiles and
whether it runs profile 0 only.
"""

from __future__ import annotations

import argparse
import json
import platform
from importlib import metadata
from pathlib import Path
from typing import Any

from trt_edge_runner.cli_args import add_json_argument, require_dir
from trt_edge_runner.cli_shell import Command


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "bundle", nargs="?", type=Path, help="also load this bundle and show its mode"
    )
    add_json_argument(parser)


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def runtime_facts() -> dict[str, Any]:
    """Versions, backends and native-guard availability; never raises for a missing runtime."""
    from trt_edge_runner import __version__
    from trt_edge_runner.actuator import NATIVE_PROFILE_GUARD, WHERE_THE_NATIVE_SWITCH_LIVES

    facts: dict[str, Any] = {
        "runner": __version__,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "executorch": _version("executorch"),
        "torch": _version("torch"),
        "numpy": _version("numpy"),
        "torch_tensorrt": _version("torch_tensorrt") or _version("torch-tensorrt"),
    }
    try:
        from executorch.runtime import Runtime

        facts["backends_registered"] = sorted(
            Runtime.get().backend_registry.registered_backend_names
        )
    except ImportError as exc:
        facts["backends_registered"] = []
        facts["runtime_error"] = f"ExecuTorch runtime not importable: {exc}"
    facts["native_profile_guard"] = NATIVE_PROFILE_GUARD
    facts["native_profile_guard_note"] = WHERE_THE_NATIVE_SWITCH_LIVES
    facts["mode_for_tensorrt_bundles"] = "native" if NATIVE_PROFILE_GUARD else "emulated"
    facts["mode_for_cpu_bundles"] = "emulated"
    return facts


def run(args: argparse.Namespace) -> int:
    from trt_edge_runner.commands.run import configure_logging

    configure_logging(args.command_prog)
    if args.bundle is not None:
        require_dir(args.bundle, "bundle directory")
    report: dict[str, Any] = {"device": runtime_facts()}
    if args.bundle is not None:
        from trt_edge_runner.runner import Runner

        report["bundle"] = Runner.open(args.bundle).describe()
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    device = report["device"]
    print(f"trt-edge-runner {device['runner']} (Python {device['python']}, {device['machine']})")
    for package in ("executorch", "torch", "numpy", "torch_tensorrt"):
        print(f"  {package}: {device[package] or 'not installed'}")
    print(f"  backends registered: {', '.join(device['backends_registered']) or 'none'}")
    guard = "yes" if device["native_profile_guard"] else "no"
    print(
        f"  native TensorRT profile guard: {guard} → TensorRT bundles run "
        f"{device['mode_for_tensorrt_bundles']} (multi-profile: profile 0 only), "
        "CPU bundles emulated"
    )
    print(f"  ({device['native_profile_guard_note']})")
    if "runtime_error" in device:
        print(f"  {device['runtime_error']}")
    if "bundle" in report:
        b = report["bundle"]
        phases = ", ".join(f"{k}→{v}" for k, v in b["phases"].items())
        print(f"bundle {b['bundle']}: {b['model']['name']} {b['model']['version']}")
        print(f"  mode: {b['mode']}{' (profile 0 only)' if b['profile0_only'] else ''}")
        print(f"  profiles: {', '.join(f'{i} {n}' for i, n in enumerate(b['profiles']))}")
        print(f"  phases: {phases}")
    return 0


COMMAND = Command(
    "show runtime versions, registered backends and the runner mode",
    add_arguments=add_arguments,
    run=run,
)
