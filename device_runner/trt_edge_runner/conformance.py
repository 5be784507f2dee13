"""Run profile-selection conformance vectors against the Python policy.

    python -m trt_edge_runner.conformance tests/vectors/profile_selection.json

prints one line per failing case and then `N passed, M failed`; exits 0 when
all pass, 1 when any fails, 2 when the file cannot be read or a case is not in
the vectors format. The C++ binary `trt_edge_conformance` reads the same file
and prints the same summary, so both implementations answer to one contract.

Format: `{"cases": [{"name", "table": {"bounds": [[{"min", "max"}, ...], ...],
"active"}, "request": {"kind": "default"|"pinned"|"auto", "index"?},
"inputs": [[dims...], ...], "expect": {"outcome", "profile"?}}]}`; `profile`
is present exactly when the outcome lets execution continue.

Standard library only: this module ships to devices.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from trt_edge_runner.errors import EXIT_BAD_INPUT, TrtEdgeError
from trt_edge_runner.policy import (
    Outcome,
    ProfileBounds,
    ProfileTable,
    Request,
    Selection,
    select_profile,
)


class VectorFormatError(TrtEdgeError, ValueError):
    """A vectors file or case that does not follow the format; the message says where."""

    exit_code = EXIT_BAD_INPUT


@dataclass(frozen=True)
class Case:
    name: str
    table: ProfileTable
    request: Request
    inputs: tuple[tuple[int, ...], ...]
    expect: Selection


def _ints(value: Any, where: str) -> tuple[int, ...]:
    if not isinstance(value, list) or not all(
        isinstance(v, int) and not isinstance(v, bool) for v in value
    ):
        raise VectorFormatError(f"{where}: expected a list of integers, got {value!r}")
    return tuple(value)


def _field(obj: Any, key: str, where: str) -> Any:
    if not isinstance(obj, dict) or key not in obj:
        raise VectorFormatError(f"{where}: missing {key!r}")
    return obj[key]


def parse_case(raw: Any, where: str) -> Case:
    """One case of the vectors file; `where` (e.g. `FILE: cases[3]`) prefixes errors."""
    name = _field(raw, "name", where)
    if not isinstance(name, str):
        raise VectorFormatError(f"{where}.name: expected a string")
    where = f"{where} ({name!r})"
    tbl = _field(raw, "table", where)
    rows = _field(tbl, "bounds", f"{where}.table")
    if not isinstance(rows, list):
        raise VectorFormatError(f"{where}.table.bounds: expected a list of profiles")
    bounds: list[tuple[ProfileBounds, ...]] = []
    for p, row in enumerate(rows):
        if not isinstance(row, list):
            raise VectorFormatError(f"{where}.table.bounds[{p}]: expected a list of inputs")
        bounds.append(
            tuple(
                ProfileBounds(
                    _ints(_field(e, "min", f"{where}.table.bounds[{p}][{i}]"), where),
                    _ints(_field(e, "max", f"{where}.table.bounds[{p}][{i}]"), where),
                )
                for i, e in enumerate(row)
            )
        )
    active = tbl.get("active", 0)
    if not isinstance(active, int) or isinstance(active, bool):
        raise VectorFormatError(f"{where}.table.active: expected an integer")
    req = _field(raw, "request", where)
    kind = _field(req, "kind", f"{where}.request")
    if kind == "default":
        request = Request.default()
    elif kind == "auto":
        request = Request.auto()
    elif kind == "pinned":
        index = _field(req, "index", f"{where}.request")
        if not isinstance(index, int) or isinstance(index, bool):
            raise VectorFormatError(f"{where}.request.index: expected an integer")
        request = Request.pinned(index)
    else:
        raise VectorFormatError(f"{where}.request.kind: expected default, pinned or auto")
    inputs_raw = _field(raw, "inputs", where)
    if not isinstance(inputs_raw, list):
        raise VectorFormatError(f"{where}.inputs: expected a list of shapes")
    inputs = tuple(_ints(s, f"{where}.inputs[{i}]") for i, s in enumerate(inputs_raw))
    exp = _field(raw, "expect", where)
    try:
        outcome = Outcome(_field(exp, "outcome", f"{where}.expect"))
    except ValueError:
        values = ", ".join(o.value for o in Outcome)
        raise VectorFormatError(f"{where}.expect.outcome: expected one of {values}") from None
    profile = exp.get("profile")
    if outcome.continues != (profile is not None):
        raise VectorFormatError(
            f"{where}.expect: 'profile' must be present exactly when the outcome continues"
        )
    if profile is not None and (not isinstance(profile, int) or isinstance(profile, bool)):
        raise VectorFormatError(f"{where}.expect.profile: expected an integer")
    return Case(
        name=name,
        table=ProfileTable(tuple(bounds), active),
        request=request,
        inputs=inputs,
        expect=Selection(outcome, profile),
    )


def load_cases(path: str) -> list[Case]:
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except OSError as exc:
        raise VectorFormatError(f"{path}: cannot read: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise VectorFormatError(f"{path}:{exc.lineno}:{exc.colno}: not JSON: {exc.msg}") from None
    raw_cases = _field(doc, "cases", path)
    if not isinstance(raw_cases, list):
        raise VectorFormatError(f"{path}: 'cases' must be a list")
    return [parse_case(c, f"{path}: cases[{i}]") for i, c in enumerate(raw_cases)]


def _describe(s: Selection) -> str:
    return s.outcome.value if s.profile is None else f"{s.outcome.value} (profile {s.profile})"


def run_cases(cases: Sequence[Case]) -> list[str]:
    """A failure line per case whose selection differs from its expectation."""
    failures = []
    for case in cases:
        got = select_profile(case.table, case.request, case.inputs)
        if got != case.expect:
            failures.append(
                f"FAIL {case.name}: expected {_describe(case.expect)}, got {_describe(got)}"
            )
    return failures


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m trt_edge_runner.conformance",
        description="Run profile-selection conformance vectors against the Python policy.",
    )
    parser.add_argument("file", help="vectors JSON, e.g. tests/vectors/profile_selection.json")
    args = parser.parse_args(argv)
    try:
        cases = load_cases(args.file)
    except VectorFormatError as exc:
        print(f"{parser.prog}: error: {exc}", file=sys.stderr)
        return exc.exit_code
    failures = run_cases(cases)
    for line in failures:
        print(line)
    print(f"{len(cases) - len(failures)} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
