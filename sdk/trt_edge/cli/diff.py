"""`trt-edge diff A B [--json]`: what changed between two `.pte` files or bundles.

Compare two .pte files, bundle directories or bundle .tar files: methods,
shapes, delegates, sizes, profiles, policy, target, files. A .pte against a
bundle compares only the bundle's model.pte (and says so).

Exit codes follow diff(1): 0 identical, 1 different, 2 an input could not be
read. Loads no torch, executorch or docker.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from trt_edge_runner.cli_args import add_json_argument, require_path
from trt_edge_runner.cli_shell import Command

from trt_edge.inspect.compare import diff_paths


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("a", help="the old .pte or bundle")
    parser.add_argument("b", help="the new .pte or bundle")
    add_json_argument(parser, help="print the changes as JSON")


def _short(value: Any) -> str:
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= 120 else text[:117] + "..."


def run(args: argparse.Namespace) -> int:
    result = diff_paths(require_path(args.a, "file"), require_path(args.b, "file"))
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


COMMAND = Command(
    "show what changed between two .pte files or bundles", add_arguments=add_arguments, run=run
)
