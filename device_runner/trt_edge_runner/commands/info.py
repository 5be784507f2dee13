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
import sys
from importlib import metadata
from typing import Any


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "info",
        help="show runtime versions, registered backends and the runner mode",
        description=__doc__.split("\n\n")[1] if __doc__ else None,
    )
    parser.add_argument("bundle", nargs="?", help="also load this bundle and show its mode")
    parser.add_argument("--json", action="store_true", help="print JSON on stdout")
    parser.set_defaults(run=run)


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
    from trt_edge_runner.commands.run import configure_logging, exit_code
    from trt_edge_runner.errors import RunnerError

    configure_logging("trt-edge-device")
    report: dict[str, Any] = {"device": runtime_facts()}
    if args.bundle:
        from trt_edge_runner.runner import Runner

        try:
            report["bundle"] = Runner.open(args.bundle).describe()
        except RunnerError as exc:
            print(f"trt-edge-device: error: {exc}", file=sys.stderr)
            return exit_code(exc)
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
