"""Run a conformance vectors file against the Python implementation.

    python -m trt_edge_runner.conformance tests/vectors/profile_selection.json

The file's `format` picks what is checked: `profile_selection` (the default when
absent; `policy.select_profile`), `mode_decision` (`policy.decide_mode`),
`bundle_layouts` (the bundle integrity rule, on real trees materialised in a
temporary directory) or `dtypes` (the one dtype table). Prints one line per
failing case and then `N passed, M failed`; exits 0 when all pass, 1 when any
fails, 2 when the file cannot be read or a case is not in the format. The C++
binaries (`trt_edge_conformance`: profile_selection and mode_decision;
`trt_edge_bundle_conformance`; `trt_edge_dtype_conformance`) read the same files
and print the same summary, so both implementations answer to one contract.

Standard library only: this package ships to devices.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Any

from trt_edge_runner.conformance import dtype_table, layouts, mode
from trt_edge_runner.conformance.selection import (
    Case,
    load_cases,
    parse_case,
    run_cases,
)
from trt_edge_runner.conformance.vectors import (
    VectorFormatError,
    cases_of,
    format_of,
    read_vectors,
)


def _selection(doc: dict[str, Any], path: str) -> tuple[int, list[str]]:
    cases = [parse_case(raw, where) for raw, where in cases_of(doc, path)]
    return len(cases), run_cases(cases)


RUNNERS: dict[str, Callable[[dict[str, Any], str], tuple[int, list[str]]]] = {
    "profile_selection": _selection,
    "mode_decision": mode.run,
    "bundle_layouts": layouts.run,
    "dtypes": dtype_table.run,
}


def run_file(path: str) -> tuple[int, list[str]]:
    """(cases, failure lines) for the vectors file at `path`, whatever its format."""
    doc = read_vectors(path)
    fmt = format_of(doc, path)
    runner = RUNNERS.get(fmt)
    if runner is None:
        raise VectorFormatError(
            f"{path}: unknown format {fmt!r} (known: {', '.join(sorted(RUNNERS))})"
        )
    return runner(doc, path)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m trt_edge_runner.conformance",
        description="Run conformance vectors (selection, mode, bundle layouts, dtypes) "
        "against the Python implementation.",
    )
    parser.add_argument("file", help="vectors JSON, e.g. tests/vectors/profile_selection.json")
    args = parser.parse_args(argv)
    try:
        total, failures = run_file(args.file)
    except VectorFormatError as exc:
        print(f"{parser.prog}: error: {exc}", file=sys.stderr)
        return exc.exit_code
    for line in failures:
        print(line)
    print(f"{total - len(failures)} passed, {len(failures)} failed")
    return 1 if failures else 0


__all__ = ["Case", "VectorFormatError", "load_cases", "main", "parse_case", "run_cases", "run_file"]
