"""The upstream seed's TensorRT case, built here: the mini Gemma-3 (transformers'
`Gemma3ForCausalLM`, sliding + full attention, `use_cache=False`, last-position logits) as
one TensorRT-RTX engine with the profiles decode {seq 1} / prefill {1..256, opt 128}."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from trt_edge.pipeline.run import BuildOptions, build

pytestmark = pytest.mark.slow


def test_the_seeds_gemma3_mini_builds_into_one_two_profile_engine(
    gemma3_example: Path, tmp_path: Path
) -> None:
    manifest = gemma3_example.parent / "tensorrt.yaml"
    result = build(
        manifest,
        BuildOptions(out_dir=tmp_path / "out", cache_dir=tmp_path / "cache", source_date_epoch=0),
    )
    doc = json.loads((result.bundle_dir / "bundle.json").read_text())
    assert doc["backend"] == "tensorrt"
    (delegate,) = doc["delegates"]
    engine = delegate["engine"]
    assert engine["flavour"] == "tensorrt_rtx"
    assert [(p["name"], p["shapes"]["input_ids"]) for p in engine["profiles"]] == [
        ("decode", {"min": [1, 1], "opt": [1, 1], "max": [1, 1]}),
        ("prefill", {"min": [1, 1], "opt": [1, 128], "max": [1, 256]}),
    ]
    # Both inputs span the same `seq`, so each profile sets both.
    assert all(p["shapes"]["position_ids"] == p["shapes"]["input_ids"] for p in engine["profiles"])
    assert [t["name"] for t in engine["inputs"]] == ["input_ids", "position_ids"]
    assert engine["outputs"] == [{"name": "output_0", "dtype": "FLOAT", "shape": [1, 2048]}]
    # The weights (tied embedding 2048 x 320 and three layers, fp32) are in the engine.
    assert engine["weights_bytes"] > 2048 * 320 * 4
    report = json.loads((result.bundle_dir / "reports" / "validation.json").read_text())
    assert report["ok"] and report["execution"]["ran"] is False
