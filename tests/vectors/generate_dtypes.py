"""Writes `dtypes.json`: the one dtype table (`trt_edge_runner.dtypes`), for the C++ side.

Unlike the other vector files this one is *derived*: the Python table is the single
source, and this file carries it to C++, where `trt_edge_dtype_conformance` checks
the C++ runner's table (`device_runner/cpp/runner/dtypes.h`) and ExecuTorch's own
ScalarType numbering and element sizes against it. `python -m
trt_edge_runner.conformance tests/vectors/dtypes.json` fails when this file is
stale. Regenerate with:

    .venv/bin/python tests/vectors/generate_dtypes.py   # --check: compare only
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from trt_edge_runner.dtypes import DTYPES
from vector_file import write_or_check

OUT = Path(__file__).with_name("dtypes.json")


def document() -> str:
    rows = ",\n".join("  " + json.dumps(dataclasses.asdict(d)) for d in DTYPES)
    description = (
        "The trt-edge dtype table, written from trt_edge_runner/dtypes.py by "
        "tests/vectors/generate_dtypes.py. Run: python -m trt_edge_runner.conformance FILE, "
        "and the C++ trt_edge_dtype_conformance FILE."
    )
    return (
        f'{{"format": "dtypes",\n "description": {json.dumps(description)},\n'
        f' "dtypes": [\n{rows}\n]}}\n'
    )


if __name__ == "__main__":
    write_or_check(OUT, document())
