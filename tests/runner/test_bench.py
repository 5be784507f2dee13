"""`trt-edge bench`: per-phase percentiles for three requests, the alternating loop, a chart."""

from __future__ import annotations

import json
import os
from pathlib import Path

import matplotlib.image
import pytest
from trt_edge.cli.main import main as host_main

pytestmark = pytest.mark.slow


def test_bench_json_and_plot(
    llm_like_bundle: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    chart = tmp_path / "charts" / "bench.png"
    argv = ["bench", str(llm_like_bundle), "--iterations", "6", "--decode-steps", "3"]
    assert host_main([*argv, "--json", "--plot", str(chart)]) == 0
    result = json.loads(capsys.readouterr().out)
    assert set(result["phases"]) == {"decode", "prefill"}
    assert result["widest_profile"] == 1
    prefill = result["phases"]["prefill"]
    assert prefill["dims"] == {"seq": 16}
    for case in ("policy", "auto", "widest"):
        row = prefill[case]
        assert row["profile"] == 1 and row["n"] == 6
        assert 0 < row["p50_ms"] <= row["p90_ms"] <= row["p99_ms"]
    decode = result["phases"]["decode"]
    assert decode["policy"]["profile"] == 0 and decode["auto"]["profile"] == 0
    # seq 1 does not fit the widest (prefill) profile: reported, not silently skipped.
    assert "outside profile 1" in decode["widest"]["error"]
    loop = result["alternating"]
    assert loop["decode_steps"] == 3 and loop["round"]["n"] == loop["rounds"]
    # Every round switches prefill → decode → (next round) prefill.
    assert loop["profile_switches"] == 2 * (loop["rounds"] + 1) - 1
    assert result["machine"]["cores"] == os.cpu_count()
    assert result["mode"] == "emulated" and "emulated" in result["note"]
    image = matplotlib.image.imread(chart)
    assert image.shape[0] > 200 and image.shape[1] > 400
    assert [p.name for p in chart.parent.iterdir()] == ["bench.png"]


def test_bench_table_output(llm_like_bundle: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert host_main(["bench", str(llm_like_bundle), "--iterations", "3"]) == 0
    out = capsys.readouterr().out
    assert "p50 ms" in out and "prefill    policy" in out and "alternating loop" in out


def test_bench_rejects_zero_iterations(
    llm_like_bundle: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert host_main(["bench", str(llm_like_bundle), "--iterations", "0"]) == 2
    assert "--iterations" in capsys.readouterr().err
