"""`trt-edge diff A B [--json]`: what changed between two `.pte` files or bundles.

Shows methods, I/O shapes, delegates, sizes and, for two bundles, profiles, policy,
target, files and provenance. Exit codes follow diff(1): 0 identical, 1 different,
2 an input could not be read. Loads no torch, executorch or docker.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "diff",
        help="show what changed between two .pte files or bundles",
        description="Compare two .pte files, bundle directories or bundle .tar files: "
        "methods, shapes, delegates, sizes, profiles, policy, target, files. A .pte "
        "against a bundle compares only the bundle's model.pte (and says so).",
    )
    parser.add_argument("a", help="the old .pte or bundle")
    parser.add_argument("b", help="the new .pte or bundle")
    parser.add_argument("--json", action="store_true", help="print the changes as JSON")
    parser.set_defaults(run=run)


def _short(value: Any) -> str:
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= 120 else text[:117] + "..."


def run(args: argparse.Namespace) -> int:
    try:
        return _run(args)
    except BrokenPipeError:
        # `trt-edge diff … | head`: the reader left; stop quietly like other CLI tools.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0


def _run(args: argparse.Namespace) -> int:
    from trt_edge.inspect.compare import diff_paths
    from trt_edge.inspect.errors import InspectError

    try:
        result = diff_paths(args.a, args.b)
    except InspectError as exc:
        print(f"trt-edge diff: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"trt-edge diff: {exc.filename or ''}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(result.to_dict(), indent=2, sort_keys=True))
        return 0 if result.identical else 1
    if result.note:
        # A bundle against a .pte: say up front that only the programs were compared.
        print(f"note: {result.note}")
    if result.identical:
        what = "in the programs (model.pte only)" if result.note else f"({result.compared})"
        print(f"{args.a} and {args.b}: no differences {what}")
        return 0
    print(f"--- {args.a}\n+++ {args.b}   ({result.compared}, {len(result.changes)} change(s))")
    section = None
    for change in result.changes:
        if change.section != section:
            section = change.section
            print(f"[{section}]")
        if change.kind == "added":
            print(f"  + {change.path}: {_short(change.after)}")
        elif change.kind == "removed":
            print(f"  - {change.path}: {_short(change.before)}")
        else:
            print(f"  ~ {change.path}: {_short(change.before)} -> {_short(change.after)}")
    return 1
