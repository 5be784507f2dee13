"""`trt-edge inspect PATH [--json] [--extract-engines DIR]`: what is inside an artifact.

Show what is inside a .pte, a bundle directory or a bundle .tar: methods, I/O,
delegates, TensorRT blobs; for bundles the profile table, policy, target,
provenance and a hash check of every file.

Exit codes: 0 read and every check passed; 1 a check failed (hash mismatch, missing or
unlisted file, malformed TensorRT blob, profile-signature mismatch); 2 PATH is not a
readable `.pte` or bundle. Only the standard library and rich are loaded (no torch).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from trt_edge_runner.bundle_integrity import read_manifest
from trt_edge_runner.cli_args import add_json_argument, require_path
from trt_edge_runner.cli_shell import Command
from trt_edge_runner.errors import UsageError, Where

from trt_edge.inspect.engine_check import differences, read_engine_table
from trt_edge.inspect.pte_reader import read_delegate_blob, read_pte
from trt_edge.inspect.report import extract_engines, inspect_path
from trt_edge.inspect.trt_blob import engine_view, parse_trt_blob


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", help="a .pte file, a bundle directory or a bundle .tar")
    add_json_argument(parser, help="print the report as JSON")
    parser.add_argument(
        "--extract-engines",
        metavar="DIR",
        help="write each TensorRT delegate's engine bytes and blob metadata into DIR",
    )
    parser.add_argument(
        "--engines",
        action="store_true",
        help="read each TensorRT engine back with TensorRT (needs a CUDA driver) and compare "
        "its own profile table and I/O with what bundle.json records",
    )


def run(args: argparse.Namespace) -> int:
    report = inspect_path(require_path(args.path, "file"))
    extracted = None
    if args.extract_engines:
        check_extract_dir(args.extract_engines)
        extracted = extract_engines(args.path, args.extract_engines)
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
    problems = list(report.problems)
    if args.engines:
        problems += check_engines(require_path(args.path, "file"))
    for problem in problems:  # the job ran and found problems: a report, exit 1
        print(f"{args.command_prog}: {problem}", file=sys.stderr)
    return 0 if report.ok and not problems else 1


def check_engines(path: Path) -> list[str]:
    """Each recorded engine deserialized and compared with its record; one line per engine
    that agrees, a problem per difference. Raises `EngineReadError` where none can be read."""
    if not path.is_dir():
        raise UsageError(
            "needs a bundle directory (its bundle.json holds the records)",
            where=Where(path, option="--engines"),
        )
    _, bundle = read_manifest(path)
    entries = {(e.method, e.index): e for e in read_pte(path / "model.pte").delegates}
    problems: list[str] = []
    recorded = [d for d in bundle.delegates if d.engine is not None]
    for d in recorded:
        assert d.engine is not None
        source = f"{path}: delegate {d.method}[{d.index}]"
        data = read_delegate_blob(path / "model.pte", entries[(d.method, d.index)])
        engine = bytes(engine_view(data, parse_trt_blob(data, source=source)))
        table = read_engine_table(engine, d.engine, source)
        found = differences(d.engine, table)
        problems += [
            f"{source}: the engine's own table differs from its record: {f}" for f in found
        ]
        if not found:
            print(
                f"{source}: the engine read back agrees with its record "
                f"({len(table.profiles)} profiles)"
            )
    if not recorded:
        print(f"{path}: no TensorRT engine records in bundle.json; nothing to compare")
    return problems


def check_extract_dir(out_dir: str) -> None:
    """Refuse `--extract-engines DIR` before writing anything if a file is in its way, so the
    message is about the option, not the artifact being read."""
    path = Path(out_dir)
    for part in (path, *path.parents):
        if part.is_dir():
            return
        if part.exists():
            problem = (
                "exists and is a file; name a directory"
                if part == path
                else f"cannot be created: {part} is a file"
            )
            raise UsageError(problem, where=Where(path, option="--extract-engines"))


COMMAND = Command(
    "show what a .pte or bundle contains and check its hashes",
    add_arguments=add_arguments,
    run=run,
)
