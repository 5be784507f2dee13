"""`trt-edge inspect PATH [--json] [--extract-engines DIR]`: what is inside an artifact.

PATH is a `.pte`, a bundle directory or a bundle `.tar`. Prints a tree (or `--json`):
methods, I/O dtypes and upper-bound shapes, memory plan, delegates and where their
blobs live, TensorRT blob headers/metadata; for bundles also the profile table, policy,
target fingerprint, provenance and whether every file hash matches.

Exit codes: 0 read and every check passed; 1 a check failed (hash mismatch, missing or
unlisted file, malformed TensorRT blob, profile-signature mismatch); 2 PATH is not a
readable `.pte` or bundle. Only the standard library and rich are loaded (no torch).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "inspect",
        help="show what a .pte or bundle contains and check its hashes",
        description="Show what is inside a .pte, a bundle directory or a bundle .tar: "
        "methods, I/O, delegates, TensorRT blobs; for bundles the profile table, policy, "
        "target, provenance and a hash check of every file.",
    )
    parser.add_argument("path", help="a .pte file, a bundle directory or a bundle .tar")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument(
        "--extract-engines",
        metavar="DIR",
        help="write each TensorRT delegate's engine bytes and blob metadata into DIR",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    try:
        return _run(args)
    except BrokenPipeError:
        # `trt-edge inspect … | head`: the reader left; stop quietly like other CLI tools.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0


def _run(args: argparse.Namespace) -> int:
    from trt_edge.inspect.errors import InspectError
    from trt_edge.inspect.report import extract_engines, inspect_path

    try:
        report = inspect_path(args.path)
    except InspectError as exc:
        print(f"trt-edge inspect: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(
            f"trt-edge inspect: {exc.filename or args.path}: {exc.strerror or exc}", file=sys.stderr
        )
        return 2
    extracted = None
    if args.extract_engines:
        problem = _extract_dir_problem(args.extract_engines)
        if problem:
            print(f"trt-edge inspect: {problem}", file=sys.stderr)
            return 2
        try:
            extracted = extract_engines(args.path, args.extract_engines)
        except InspectError as exc:
            print(f"trt-edge inspect: {exc}", file=sys.stderr)
            return 2
        except OSError as exc:
            # Name the file that failed (the output, usually), not the artifact being read.
            where = exc.filename or args.extract_engines
            print(
                f"trt-edge inspect: --extract-engines: {where}: {exc.strerror or exc}",
                file=sys.stderr,
            )
            return 2
    if args.json:
        doc = dict(report.doc)
        doc["problems"] = report.problems
        if extracted is not None:
            doc["extracted"] = [str(p) for p in extracted]
        print(json.dumps(doc, indent=2, sort_keys=True))
    else:
        from rich.console import Console

        from trt_edge.inspect.render import render_tree

        # Piped output is not cut at 80 columns: trees are wide and meant to be read whole.
        width = None if sys.stdout.isatty() else 160
        Console(width=width).print(render_tree(report.doc))
        if extracted is not None:
            engines = [p for p in extracted if p.suffix == ".engine"]
            if engines:
                print(f"extracted {len(engines)} TensorRT engine(s) into {args.extract_engines}")
            else:
                print(f"no TensorRT delegates in {args.path}; nothing extracted")
    for problem in report.problems:
        print(f"trt-edge inspect: {problem}", file=sys.stderr)
    return 0 if report.ok else 1


def _extract_dir_problem(out_dir: str) -> str | None:
    """Why `--extract-engines DIR` cannot be used, or None (checked before writing anything,
    so a file or unwritable path in its way gets a message about the option, not the input)."""
    path = Path(out_dir)
    for part in (path, *path.parents):
        if part.is_dir():
            return None
        if part.exists():
            if part == path:
                return f"--extract-engines must be a directory: {path} exists and is a file"
            return (
                f"--extract-engines must be a directory: {path} cannot be created "
                f"because {part} is a file"
            )
    return None
