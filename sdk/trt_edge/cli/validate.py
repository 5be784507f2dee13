"""`trt-edge validate MANIFEST [--json]`: check a manifest and show every problem at once.

Check a trt-edge manifest: YAML, schema, symbols and profile ranges, runtime
phases, targets, files. Prints every error and warning at once. For a Hugging Face
model it also estimates the bundle's memory needs from the folder's files (a lower
bound) and warns for each target board that cannot hold even that.

Exit 0 valid (warnings allowed); 1 the manifest has errors (checking is the job:
it ran and found them); 2 the manifest cannot be read or the flags are wrong.
`trt-edge build` on the same invalid manifest exits 2: for it, the manifest is
bad input. Only PyYAML, pydantic and the standard library are loaded — no
torch, executorch or docker — so this stays instant.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from trt_edge_runner.cli_args import add_json_argument
from trt_edge_runner.cli_shell import Command
from trt_edge_runner.memory_budget import mib

from trt_edge.cli._manifest import add_manifest_argument, load_readable
from trt_edge.memory import over_budget
from trt_edge.targets import load_catalog


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_manifest_argument(parser)
    add_json_argument(parser, help="print a JSON report on stdout")


def summary(result: Any) -> str:
    """One line describing a valid manifest: what it declares and what ships."""
    m = result.manifest
    profiles = ", ".join(f"{p.name} #{i}" for i, p in enumerate(m.profiles))
    phases = ", ".join(f"{k}→{v}" for k, v in m.runtime.phases.items()) or "no phases"
    domain = ", ".join(f"{s} {lo}..{hi}" for s, (lo, hi) in m.export_domain().items())
    warnings = len(result.warnings)
    parts = [
        f"{result.path}: valid: {m.name} {m.version}",
        f"{len(m.inputs)} input(s)",
        f"profiles [{profiles}]",
        f"policy {m.runtime.policy} ({phases})",
        f"targets {', '.join(m.targets)}",
    ]
    if domain:
        parts.append(f"export domain {domain}")
    parts.append(f"{warnings} warning(s)")
    return "; ".join(parts)


def memory_report(manifest: Any) -> dict[str, Any] | None:
    """A Hugging Face model's memory needs estimated before building (a lower bound) and a
    warning per board of the manifest's targets that cannot hold even that; None when
    nothing can be told before building (`trt_edge.memory.estimate`)."""
    from trt_edge.memory.estimate import manifest_estimate

    estimate = manifest_estimate(manifest)
    if estimate is None:
        return None
    catalog = load_catalog()
    warnings = [
        warning
        for target_id in manifest.targets
        if target_id in catalog
        for warning in over_budget(estimate, catalog.get(target_id), manifest.memory_headroom_mib)
    ]
    return {"estimate": estimate.to_dict(), "warnings": warnings}


def run(args: argparse.Namespace) -> int:
    from trt_edge.manifest.diagnostics import print_diagnostics

    result = load_readable(args.manifest)
    code = 0 if result.ok else 1
    memory = memory_report(result.manifest) if result.manifest is not None else None
    if args.json:
        report = result.to_dict()
        if result.manifest is not None:
            report["export_domain"] = {
                s: list(r) for s, r in result.manifest.export_domain().items()
            }
            report["memory"] = memory
        print(json.dumps(report, indent=2))
        return code
    print_diagnostics(result.diagnostics, result.path, sys.stderr, color=sys.stderr.isatty())
    if result.ok:
        print(summary(result))
        if memory is not None:
            needs = memory["estimate"]
            print(
                f"{result.path}: memory estimated before building: at least "
                f"{mib(needs['total_bytes'])} (weights {mib(needs['weights_bytes'])} in "
                f"float32, KV cache {mib(needs['kv_cache_bytes'])}, runner "
                f"{mib(needs['runner_bytes'])}; activations are known after lowering)"
            )
            for warning in memory["warnings"]:
                print(f"{result.path}: warning: memory: {warning}", file=sys.stderr)
    else:
        errors = len(result.errors)
        print(
            f"{result.path}: {errors} error(s), {len(result.warnings)} warning(s)",
            file=sys.stderr,
        )
    return code


COMMAND = Command(
    "check a manifest and report every problem with its file:line:col",
    add_arguments=add_arguments,
    run=run,
)
