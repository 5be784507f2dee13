"""The dtype vectors (`tests/vectors/dtypes.json`) against the one table, `trt_edge_runner.dtypes`.

The file is written from the table (`tests/vectors/generate_dtypes.py`) for the C++
side (`trt_edge_dtype_conformance`); here it must equal the table, row for row, so a
table changed without regenerating the file fails.

Standard library only: this module ships to devices.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from trt_edge_runner.conformance.vectors import VectorFormatError, field
from trt_edge_runner.dtypes import DTYPES


def run(doc: dict[str, Any], path: str) -> tuple[int, list[str]]:
    rows = field(doc, "dtypes", path)
    if not isinstance(rows, list):
        raise VectorFormatError(f"{path}: 'dtypes' must be a list")
    table = [dataclasses.asdict(d) for d in DTYPES]
    failures = []
    for i in range(max(len(rows), len(table))):
        want = rows[i] if i < len(rows) else None
        have = table[i] if i < len(table) else None
        if want != have:
            failures.append(
                f"FAIL dtypes[{i}]: the file has {want}, trt_edge_runner.dtypes has {have} "
                "(regenerate with tests/vectors/generate_dtypes.py)"
            )
    return len(table), failures
