"""`trt-edge inspect`/`diff` on the bundles the real build pipeline makes (build fixtures)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from trt_edge.cli.main import main
from trt_edge.pipeline.bundle_tar import write_bundle_tar
from trt_edge_runner.bundle_format import BundleManifest

pytestmark = pytest.mark.slow


def inspect_json(capsys: pytest.CaptureFixture[str], path: Path) -> tuple[int, dict[str, Any]]:
    capsys.readouterr()  # drop whatever building the fixture printed
    code = main(["inspect", str(path), "--json"])
    return code, json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("fixture", ["tiny_llm_bundle", "vision_bundle"])
def test_built_bundles_inspect_clean(
    capsys: pytest.CaptureFixture[str], request: pytest.FixtureRequest, fixture: str
) -> None:
    bundle: Path = request.getfixturevalue(fixture)
    code, doc = inspect_json(capsys, bundle)
    assert code == 0, doc["problems"]
    manifest = BundleManifest.from_json((bundle / "bundle.json").read_bytes())
    assert doc["hashes_ok"] is True
    assert {f["name"] for f in doc["files"]} == set(manifest.files)
    assert [p["name"] for p in doc["profiles"]] == [p.name for p in manifest.profiles]
    assert doc["runtime"]["phases"] == dict(manifest.runtime.phases)
    assert doc["target"] == manifest.target
    method = next(m for m in doc["pte"]["methods"] if m["name"] == manifest.method)
    # The planned input upper bound is the export domain's max for every symbolic dim.
    domain = manifest.symbols()
    for spec, value in zip(manifest.inputs, method["inputs"], strict=True):
        expected = [d if isinstance(d, int) else domain[d][1] for d in spec.shape]
        assert value["shape"] == expected, spec.name
    delegates = [(d["method"], d["index"], d["backend_id"]) for d in doc["delegates"]]
    found = [
        (d["method"], d["index"], d["backend_id"])
        for m in doc["pte"]["methods"]
        for d in m["delegates"]
    ]
    assert delegates == found


def test_built_bundle_tar_matches_directory(
    capsys: pytest.CaptureFixture[str], tiny_llm_bundle: Path, tmp_path: Path
) -> None:
    tar = write_bundle_tar(tiny_llm_bundle, tmp_path / "tiny_llm.tar")
    code, from_tar = inspect_json(capsys, tar)
    assert code == 0, from_tar["problems"]
    _, from_dir = inspect_json(capsys, tiny_llm_bundle)
    for doc in (from_tar, from_dir):
        doc.pop("path"), doc.pop("container"), doc["pte"].pop("path")
    assert from_tar == from_dir


def test_diff_between_the_two_examples_and_after_tampering(
    capsys: pytest.CaptureFixture[str], tiny_llm_bundle: Path, vision_bundle: Path, tmp_path: Path
) -> None:
    assert main(["diff", str(tiny_llm_bundle), str(tiny_llm_bundle)]) == 0
    assert main(["diff", str(tiny_llm_bundle), str(vision_bundle), "--json"]) == 1
    capsys.readouterr()
    copy = Path(shutil.copytree(tiny_llm_bundle, tmp_path / "b"))
    (copy / "model.pte").write_bytes((copy / "model.pte").read_bytes() + b"\0")
    assert main(["inspect", str(copy)]) == 1
    assert "model.pte: size " in capsys.readouterr().err
