"""`trt-edge validate MANIFEST [--json]`: check a manifest and show every problem at once.

Exit codes: 0 valid (warnings allowed), 1 the manifest has errors, 2 usage
(no such file, a directory, bad flags). Only PyYAML, pydantic and the standard
library are loaded — no torch, executorch or docker — so this stays instant.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "validate",
        help="check a manifest and report every problem with its file:line:col",
        description="Check a trt-edge manifest: YAML, schema, symbols and profile ranges, "
        "runtime phases, targets, files. Prints every error and warning at once.",
    )
    parser.add_argument("manifest", help="path to manifest.yaml")
    parser.add_argument("--json", action="store_true", help="print a JSON report on stdout")
    parser.set_defaults(run=run)


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


def run(args: argparse.Namespace) -> int:
    from trt_edge.diagnostics.render import print_diagnostics
    from trt_edge.manifest import load_manifest

    result = load_manifest(args.manifest)
    usage_error = any(d.stage == "io" and d.severity == "error" for d in result.diagnostics)
    code = 2 if usage_error else (0 if result.ok else 1)
    if args.json:
        report = result.to_dict()
        if result.manifest is not None:
            report["export_domain"] = {
                s: list(r) for s, r in result.manifest.export_domain().items()
            }
        print(json.dumps(report, indent=2))
        return code
    color = sys.stderr.isatty()
    print_diagnostics(result.diagnostics, result.path, sys.stderr, color=color)
    if result.ok:
        print(summary(result))
    else:
        errors = len(result.errors)
        print(
            f"{result.path}: {errors} error(s), {len(result.warnings)} warning(s)",
            file=sys.stderr,
        )
    return code
