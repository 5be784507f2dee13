"""`trt-edge diff`: what changed between real `.pte` files and bundles."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from trt_edge.cli.main import main
from trt_edge.inspect.compare import diff_paths
from trt_edge_runner.bundle_format import DimRange, Profile

from tests.helpers.bundles import write_bundle
from tests.inspect.pte_builders import (
    DECODER_INPUTS,
    DECODER_OUTPUTS,
    DECODER_PROFILES,
    decoder_bundle,
)

pytestmark = pytest.mark.slow


def changes(a: Path, b: Path) -> dict[str, Any]:
    return {c.path: c for c in diff_paths(a, b).changes}


def test_identical_files_have_no_differences(
    capsys: pytest.CaptureFixture[str], xnnpack_pte: Path
) -> None:
    assert diff_paths(xnnpack_pte, xnnpack_pte).identical
    assert main(["diff", str(xnnpack_pte), str(xnnpack_pte)]) == 0
    assert "no differences" in capsys.readouterr().out


def test_methods_added_and_removed(xnnpack_pte: Path, two_method_pte: Path) -> None:
    found = changes(xnnpack_pte, two_method_pte)
    assert found["methods.forward"].kind == "removed"
    assert found["methods.prefill"].kind == "added"
    assert found["methods.prefill"].after["inputs"][0]["shape"] == [1, 64]
    assert found["delegates.decode[0]"].kind == "added"


def test_delegate_backend_change_and_tensorrt_blob(
    two_method_pte: Path, tensorrt_pte: Path
) -> None:
    found = changes(two_method_pte, tensorrt_pte)
    key = next(k for k in found if k.endswith("].backend_id"))
    assert (found[key].before, found[key].after) == ("XnnpackBackend", "TensorRTBackend")
    assert any(k.endswith("].tensorrt") and c.kind == "added" for k, c in found.items())


def test_delegates_not_constants_differ_between_xnnpack_and_portable(
    xnnpack_pte: Path, portable_pte: Path
) -> None:
    found = changes(xnnpack_pte, portable_pte)
    assert found["delegates.forward[0]"].kind == "removed"
    assert found["sizes.constant_tensors"].before == 1
    assert found["sizes.constant_tensors"].after == 3


def test_bundles_show_profile_policy_and_version_changes(
    capsys: pytest.CaptureFixture[str], xnnpack_pte: Path, tmp_path: Path
) -> None:
    old = decoder_bundle(tmp_path / "old", xnnpack_pte)
    wider = (DECODER_PROFILES[0], Profile(name="prefill", dims={"seq": DimRange(2, 64, 128)}))
    new = write_bundle(
        tmp_path / "new",
        xnnpack_pte,
        wider,
        {"decode": 0, "prefill": "auto"},
        policy="auto",
        version="1.1.0",
        report=True,
        inputs=DECODER_INPUTS,
        outputs=DECODER_OUTPUTS,
    )
    found = changes(old, new)
    assert found["model.version"].before == "1.0.0" and found["model.version"].after == "1.1.0"
    assert found["profiles.1:prefill.dims.seq.opt"].after == 64
    assert found["policy.phases.prefill"].after == "auto"
    assert not any(k.startswith(("methods", "delegates", "files.model.pte")) for k in found)
    code = main(["diff", str(old), str(new), "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 1 and doc["compared"] == "bundle" and not doc["identical"]


def test_pte_against_bundle_compares_the_bundled_program(xnnpack_pte: Path, tmp_path: Path) -> None:
    bundle = decoder_bundle(tmp_path / "b", xnnpack_pte)
    result = diff_paths(xnnpack_pte, bundle)
    assert result.compared == "pte" and result.identical
    assert result.note is not None and "only the bundle's model.pte was compared" in result.note


def test_bundle_against_its_own_pte_says_only_the_programs_were_compared(
    capsys: pytest.CaptureFixture[str], xnnpack_pte: Path, tmp_path: Path
) -> None:
    bundle = decoder_bundle(tmp_path / "b", xnnpack_pte)
    pte = bundle / "model.pte"
    assert main(["diff", str(bundle), str(pte)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"note: {bundle} is a bundle and {pte} a .pte: only the bundle's")
    assert "profiles, policy, target, files and provenance were not" in out
    assert "no differences in the programs (model.pte only)" in out
    assert "no differences (pte)" not in out
    assert main(["diff", str(pte), str(bundle), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["compared"] == "pte" and "only the bundle's model.pte" in doc["note"]
    assert main(["diff", str(bundle), str(bundle), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["note"] is None


def test_unreadable_input_exits_2(
    capsys: pytest.CaptureFixture[str], xnnpack_pte: Path, tmp_path: Path
) -> None:
    assert main(["diff", str(xnnpack_pte), str(tmp_path / "missing.pte")]) == 2
    assert "missing.pte: no such file" in capsys.readouterr().err
