"""The example bundles (built by the session fixtures through the real pipeline) are complete,
self-consistent and validated: the facts every other area builds on."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from trt_edge_runner.bundle_format import BundleManifest

pytestmark = pytest.mark.slow


def _doc(bundle: Path) -> BundleManifest:
    return BundleManifest.from_json((bundle / "bundle.json").read_bytes())


def _report(bundle: Path) -> dict[str, Any]:
    report: dict[str, Any] = json.loads((bundle / "reports" / "validation.json").read_bytes())
    return report


@pytest.mark.parametrize("fixture", ["tiny_llm_bundle", "vision_bundle"])
def test_every_listed_file_matches_its_hash(fixture: str, request: pytest.FixtureRequest) -> None:
    bundle: Path = request.getfixturevalue(fixture)
    doc = _doc(bundle)
    assert set(doc.files) == {"model.pte", "reports/validation.json"}
    for name, entry in doc.files.items():
        data = (bundle / name).read_bytes()
        assert hashlib.sha256(data).hexdigest() == entry.sha256
        assert len(data) == entry.size


@pytest.mark.parametrize("fixture", ["tiny_llm_bundle", "vision_bundle"])
def test_bundle_records_target_backend_and_provenance(
    fixture: str, request: pytest.FixtureRequest
) -> None:
    bundle: Path = request.getfixturevalue(fixture)
    doc = _doc(bundle)
    # An XNNPACK bundle's fingerprint asks a device its CPU architecture only.
    assert doc.target == {"id": "cpu-x86_64", "kind": "cpu", "arch": "x86_64"}
    assert doc.backend == "xnnpack"
    assert all(d.backend_id == "XnnpackBackend" for d in doc.delegates)
    assert doc.delegates, "xnnpack must claim at least one partition"
    prov = doc.provenance
    assert len(prov["manifest_sha256"]) == 64
    assert len(prov["model_source_sha256"]) == 64
    assert "model.py" in prov["model_source_files"]
    assert prov["packages"]["executorch"] == "1.5.1"
    assert prov["source_date_epoch"] == 1_780_000_000
    assert prov["backend_reason"] == "auto: target cpu-x86_64 runs on the CPU: xnnpack"


def test_tiny_llm_profiles_policy_and_outputs(tiny_llm_bundle: Path) -> None:
    doc = _doc(tiny_llm_bundle)
    assert [p.name for p in doc.profiles] == ["decode", "prefill"]
    assert doc.runtime.policy == "pinned"
    assert doc.runtime.phases == {"prefill": 1, "decode": 0}
    assert [o.shape for o in doc.outputs] == [
        (1, "seq", 256),
        (2, 1, 4, 640, 16),
        (2, 1, 4, 640, 16),
    ]
    assert doc.inputs[0].values == (0, 256)


def test_tiny_llm_validation_covers_every_profile_and_rejects_outside(
    tiny_llm_bundle: Path,
) -> None:
    report = _report(tiny_llm_bundle)
    assert report["ok"] and not report["failures"]
    points = {(p["profile"], p["symbols"]["seq"]) for p in report["parity"]}
    assert points == {(0, 1), (1, 2), (1, 128), (1, 512)}
    assert all(p["selected_profile"] == p["profile"] for p in report["parity"])
    outside = {(o["profile"], o["value"]): o for o in report["outside"]}
    assert set(outside) == {(0, 2), (1, 1), (1, 513)}
    assert all(
        o["rejected"] and o["error_type"] == "ProfileMismatchError" for o in outside.values()
    )
    assert "[2, 512]" in outside[(1, 513)]["error"]


def test_vision_largest_output_comes_from_a_nonzero_profile(vision_bundle: Path) -> None:
    report = _report(vision_bundle)
    assert report["ok"]
    largest = report["largest_output"]
    assert largest["largest_profile"] == 2
    last = largest["per_profile"][2]
    assert last["shapes"] == [[32, 10]] and last["fits"]
    assert largest["per_profile"][0]["shapes"] == [[1, 10]]


def test_vision_parity_at_min_opt_max_of_each_batch_profile(vision_bundle: Path) -> None:
    report = _report(vision_bundle)
    batches = sorted(p["symbols"]["batch"] for p in report["parity"])
    assert batches == [1, 2, 4, 8, 9, 16, 32]
    for entry in report["parity"]:
        for out in entry["outputs"]:
            assert out["max_abs"] <= report["tolerance"]["atol"] + 1e-3
    assert _doc(vision_bundle).runtime.phases == {"infer": "auto"}


@pytest.mark.parametrize("fixture", ["tiny_llm_bundle", "vision_bundle"])
def test_report_records_the_delegates_bundle_json_lists(
    fixture: str, request: pytest.FixtureRequest
) -> None:
    bundle: Path = request.getfixturevalue(fixture)
    listed = json.loads((bundle / "bundle.json").read_bytes())["delegates"]
    assert _report(bundle)["delegates"] == listed


def test_pinned_phases_land_on_their_profiles(tiny_llm_bundle: Path) -> None:
    phases = {
        (e["phase"], e["selected_profile"], e["ok"]) for e in _report(tiny_llm_bundle)["phases"]
    }
    assert phases == {("prefill", 1, True), ("decode", 0, True)}


def test_auto_phase_lands_on_a_profile_that_fits_each_batch(vision_bundle: Path) -> None:
    runs = [
        (e["symbols"]["batch"], e["selected_profile"]) for e in _report(vision_bundle)["phases"]
    ]
    # sticky first-fit from a fresh runner, at each profile's opt in order
    assert runs == [(1, 0), (4, 1), (16, 2)]


def test_readable_table_shows_every_run_and_probe(tiny_llm_bundle: Path) -> None:
    from rich.console import Console
    from trt_edge.pipeline.validate import render_table

    console = Console(record=True, width=120)
    console.print(render_table(_report(tiny_llm_bundle)))
    text = console.export_text()
    assert text.count("rejected") == 3
    assert "1 prefill" in text and "seq=512" in text
    assert "delegates: XnnpackBackend" in text
