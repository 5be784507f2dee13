"""The walk of a whole build's manifest path: ≤ 30 stops, ≤ 10 returns (issue 30).

A cold build of the vision example (export, XNNPACK lowering, validation) under the tracer
of `benchmarks/walk_build.py`; tests/lint/test_build_walk.py holds the cheap part (up to
export) and the definition of a stop.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.paths import EXAMPLES
from tests.helpers.scripts import load_benchmark

STOPS, RETURNS = 30, 10  # issue 30's Must-show


@pytest.mark.slow
def test_the_walk_of_a_whole_build_is_short(tmp_path: Path) -> None:
    tool = load_benchmark("walk_build")
    walk = tool.walk_build(EXAMPLES / "vision" / "manifest.yaml", tmp_path)
    listing = "\n  ".join(walk.stops)
    assert (tmp_path / "out" / "tiny-cnn-0.1.0" / "bundle.json").is_file()
    assert any(s.startswith("sdk/trt_edge/pipeline/validate.py:") for s in walk.stops), listing
    assert len(walk.stops) <= STOPS, f"{walk.summary()}:\n  {listing}"
    assert walk.returns <= RETURNS, f"{walk.summary()}:\n  {listing}"
