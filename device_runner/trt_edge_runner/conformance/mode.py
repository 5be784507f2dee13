"""Mode-decision vectors (`tests/vectors/mode_decision.json`) against `policy.decide_mode`.

Format: `{"format": "mode_decision", "cases": [{"name", "delegate_backends": [...],
"profiles": N, "native_guard": bool, "honour_policy": bool, "expect": {"mode":
"native"|"emulated", "profile0_only": bool, "notice": null|"tensorrt_without_native_guard"|
"policy_ignored"}}]}`. The C++ binary `trt_edge_conformance` reads the same file.

Standard library only: this module ships to devices.
"""

from __future__ import annotations

from typing import Any

from trt_edge_runner.conformance.vectors import (
    VectorFormatError,
    boolean,
    cases_of,
    field,
    integer,
    name_of,
)
from trt_edge_runner.policy import TENSORRT_BACKEND_ID, decide_mode

_NOTICES = (None, "tensorrt_without_native_guard", "policy_ignored")


def _describe(mode: str, profile0_only: bool, notice: str | None) -> str:
    return (
        mode
        + (", profile 0 only" if profile0_only else "")
        + (f", notice {notice}" if notice else "")
    )


def run(doc: dict[str, Any], path: str) -> tuple[int, list[str]]:
    """(cases, failure lines) for a mode-decision vectors document."""
    backend_id = doc.get("tensorrt_backend_id", TENSORRT_BACKEND_ID)
    if backend_id != TENSORRT_BACKEND_ID:
        raise VectorFormatError(
            f"{path}: tensorrt_backend_id {backend_id!r}, but this runner calls it "
            f"{TENSORRT_BACKEND_ID!r}"
        )
    failures = []
    cases = cases_of(doc, path)
    for raw, at in cases:
        name = name_of(raw, at)
        where = f"{at} ({name!r})"
        backends = field(raw, "delegate_backends", where)
        if not isinstance(backends, list) or not all(isinstance(b, str) for b in backends):
            raise VectorFormatError(f"{where}.delegate_backends: expected a list of strings")
        expect = field(raw, "expect", where)
        mode = field(expect, "mode", f"{where}.expect")
        notice = field(expect, "notice", f"{where}.expect")
        if mode not in ("native", "emulated") or notice not in _NOTICES:
            raise VectorFormatError(f"{where}.expect: unknown mode or notice")
        want = (mode, boolean(expect, "profile0_only", f"{where}.expect"), notice)
        got = decide_mode(
            backends,
            integer(raw, "profiles", where),
            native_guard=boolean(raw, "native_guard", where),
            honour_policy=boolean(raw, "honour_policy", where),
        )
        have = (got.mode, got.profile0_only, got.notice)
        if have != want:
            failures.append(f"FAIL {name}: expected {_describe(*want)}, got {_describe(*have)}")
    return len(cases), failures
