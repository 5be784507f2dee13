"""The agent reads the runner's JSON records strictly: a field of another type is refused
where the document is read (a TypeError naming the field), never coerced into a value."""

from __future__ import annotations

from typing import Any

import pytest
from trt_edge_runner.agent.runner_process import GenerationStep, PhaseRun, read_record

STEP = {"phase": "decode", "profile": 0, "start": 3, "seq": 1, "ms": 0.25}


def test_a_well_typed_record_is_read_as_is() -> None:
    assert read_record(GenerationStep, {**STEP, "ms": 2}) == GenerationStep("decode", 0, 3, 1, 2.0)
    phase = read_record(
        PhaseRun,
        {
            "phase": "decode", "request": "pinned(0)", "profile": 0, "profile_name": "decode",
            "outcome": "ok", "median_ms": 1.5, "min_ms": 1, "max_ms": 2.0, "first_ms": 3.0,
            "inputs": [{"name": "input_ids"}], "outputs": [],
        },
    )  # fmt: skip
    assert phase.inputs == ({"name": "input_ids"},) and phase.min_ms == 1.0


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("phase", None, "expected str"),
        ("profile", True, "expected an integer"),
        ("start", "3", "expected an integer"),
        ("seq", 2.9, "expected an integer"),
        ("ms", "nan", "expected a number"),
        ("ms", False, "expected a number"),
    ],
)
def test_a_mistyped_field_is_refused_naming_it(field: str, value: Any, expected: str) -> None:
    with pytest.raises(TypeError, match=f"field '{field}' is .*{expected}"):
        read_record(GenerationStep, {**STEP, field: value})


def test_a_missing_field_is_a_key_error() -> None:
    with pytest.raises(KeyError, match="seq"):
        read_record(GenerationStep, {k: v for k, v in STEP.items() if k != "seq"})
