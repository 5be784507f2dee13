"""Profile-selection vectors (`tests/vectors/profile_selection.json`) against the Python policy.

Format: `{"cases": [{"name", "table": {"bounds": [[{"min", "max"}, ...], ...],
"active"}, "request": {"kind": "default"|"pinned"|"auto", "index"?},
"inputs": [[dims...], ...], "expect": {"outcome", "profile"?}}]}`; `profile`
is present exactly when the outcome lets execution continue. A vectors file
without a `format` key is this format. The C++ binary `trt_edge_conformance`
reads the same file.

Standard library only: this module ships to devices.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from trt_edge_runner.conformance.vectors import VectorFormatError, field, load_vector_cases
from trt_edge_runner.policy import (
    Outcome,
    ProfileBounds,
    ProfileTable,
    Request,
    Selection,
    select_profile,
)


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


def parse_case(raw: Any, where: str) -> Case:
    """One case of the vectors file; `where` (e.g. `FILE: cases[3]`) prefixes errors."""
    name = field(raw, "name", where)
    if not isinstance(name, str):
        raise VectorFormatError(f"{where}.name: expected a string")
    where = f"{where} ({name!r})"
    tbl = field(raw, "table", where)
    rows = field(tbl, "bounds", f"{where}.table")
    if not isinstance(rows, list):
        raise VectorFormatError(f"{where}.table.bounds: expected a list of profiles")
    bounds: list[tuple[ProfileBounds, ...]] = []
    for p, row in enumerate(rows):
        if not isinstance(row, list):
            raise VectorFormatError(f"{where}.table.bounds[{p}]: expected a list of inputs")
        bounds.append(
            tuple(
                ProfileBounds(
                    _ints(field(e, "min", f"{where}.table.bounds[{p}][{i}]"), where),
                    _ints(field(e, "max", f"{where}.table.bounds[{p}][{i}]"), where),
                )
                for i, e in enumerate(row)
            )
        )
    active = tbl.get("active", 0)
    if not isinstance(active, int) or isinstance(active, bool):
        raise VectorFormatError(f"{where}.table.active: expected an integer")
    req = field(raw, "request", where)
    kind = field(req, "kind", f"{where}.request")
    if kind == "default":
        request = Request.default()
    elif kind == "auto":
        request = Request.auto()
    elif kind == "pinned":
        index = field(req, "index", f"{where}.request")
        if not isinstance(index, int) or isinstance(index, bool):
            raise VectorFormatError(f"{where}.request.index: expected an integer")
        request = Request.pinned(index)
    else:
        raise VectorFormatError(f"{where}.request.kind: expected default, pinned or auto")
    inputs_raw = field(raw, "inputs", where)
    if not isinstance(inputs_raw, list):
        raise VectorFormatError(f"{where}.inputs: expected a list of shapes")
    inputs = tuple(_ints(s, f"{where}.inputs[{i}]") for i, s in enumerate(inputs_raw))
    exp = field(raw, "expect", where)
    try:
        outcome = Outcome(field(exp, "outcome", f"{where}.expect"))
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
    return [parse_case(c, where) for c, where in load_vector_cases(path)]


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
