"""`trt-edge inspect` on real `.pte` files and bundles (dir, tar, tar.gz), checks and exits."""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile
from importlib.metadata import version
from pathlib import Path
from typing import Any, Literal

import pytest
from trt_edge.cli.main import main
from trt_edge.inspect.pte_reader import read_pte
from trt_edge.inspect.signatures import profile_signature
from trt_edge_runner.bundle_format import BundleManifest

from tests.helpers.bundles import pack
from tests.inspect.pte_builders import decoder_bundle, synthesize_tensorrt_pte
from tests.inspect.upstream_trt import placeholder_engine, sample_blob

pytestmark = pytest.mark.slow


def inspect_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any], str]:
    code = main(["inspect", *args, "--json"])
    out, err = capsys.readouterr()
    return code, json.loads(out), err


def test_pte_json_lists_methods_and_delegates(
    capsys: pytest.CaptureFixture[str], two_method_pte: Path
) -> None:
    code, doc, err = inspect_json(capsys, str(two_method_pte))
    assert code == 0, err
    assert doc["kind"] == "pte" and doc["problems"] == []
    assert sorted(m["name"] for m in doc["methods"]) == ["decode", "prefill"]
    prefill = next(m for m in doc["methods"] if m["name"] == "prefill")
    assert prefill["inputs"][0] == {
        "kind": "tensor",
        "dtype": "int64",
        "shape": [1, 64],
        "dynamism": "dynamic_bound",
    }
    assert prefill["delegates"][0]["backend_id"] == "XnnpackBackend"


def test_tree_output_for_synthetic_tensorrt_pte(
    capsys: pytest.CaptureFixture[str], tensorrt_pte: Path
) -> None:
    assert main(["inspect", str(tensorrt_pte)]) == 0
    out = capsys.readouterr().out
    assert "TensorRTBackend" in out and "TensorRT TR01" in out and "TensorRT TR02" in out
    assert "alias kv_out → kv_in (kv_cache_update)" in out


def test_extract_engines_writes_engine_bytes_and_metadata(
    capsys: pytest.CaptureFixture[str], tensorrt_pte: Path, tmp_path: Path
) -> None:
    out_dir = tmp_path / "engines"
    code, doc, _ = inspect_json(capsys, str(tensorrt_pte), "--extract-engines", str(out_dir))
    assert code == 0
    engines = sorted(out_dir.glob("*.engine"))
    assert len(engines) == len(read_pte(tensorrt_pte).delegates) == 2
    # conftest wrote blob 0 (TR01, 300 B, seed 1) and blob 1 (TR02, 200 B, seed 2).
    payloads = {e.read_bytes() for e in engines}
    assert payloads == {placeholder_engine(300, 1), placeholder_engine(200, 2)}
    meta = json.loads(engines[0].with_suffix(".json").read_text())
    assert meta["blob"]["magic"] in ("TR01", "TR02")
    assert sorted(doc["extracted"]) == sorted(str(p) for p in out_dir.iterdir())


def test_malformed_tensorrt_blob_is_a_failed_check_naming_the_delegate(
    capsys: pytest.CaptureFixture[str], two_method_pte: Path, tmp_path: Path
) -> None:
    bad = bytearray(sample_blob(64))
    bad[0:4] = b"TRXX"
    broken = synthesize_tensorrt_pte(two_method_pte, tmp_path / "bad.pte", [bytes(bad)])
    code, doc, err = inspect_json(capsys, str(broken))
    assert code == 1
    assert "magic is b'TRXX'" in err and "delegate 0" in err and str(broken) in err
    assert any("tensorrt_error" in d for m in doc["methods"] for d in m["delegates"])


def test_not_a_pte_exits_2_without_traceback(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    junk = tmp_path / "notes.txt"
    junk.write_text("hello, this is not a program")
    assert main(["inspect", str(junk)]) == 2
    err = capsys.readouterr().err
    assert str(junk) in err and "Traceback" not in err
    assert main(["inspect", str(tmp_path / "missing.pte")]) == 2
    empty_dir = tmp_path / "empty"
    empty_dir.mkdir()
    assert main(["inspect", str(empty_dir)]) == 2
    assert "no bundle.json" in capsys.readouterr().err


# ---- bundles -------------------------------------------------------------------------


@pytest.fixture
def bundle(xnnpack_pte: Path, tmp_path: Path) -> Path:
    d = read_pte(xnnpack_pte).delegates[0]
    return decoder_bundle(tmp_path / "tiny-1.0.0", xnnpack_pte, delegates=(d.to_delegate_info(),))


def test_bundle_dir_reports_profiles_policy_target_and_hashes(
    capsys: pytest.CaptureFixture[str], bundle: Path
) -> None:
    code, doc, err = inspect_json(capsys, str(bundle))
    assert code == 0, err
    assert doc["kind"] == "bundle" and doc["container"] == "dir"
    assert doc["hashes_ok"] is True
    assert {f["name"]: f["status"] for f in doc["files"]} == {
        "model.pte": "ok",
        "reports/validation.json": "ok",
    }
    assert [p["name"] for p in doc["profiles"]] == ["decode", "prefill"]
    assert doc["runtime"] == {"policy": "pinned", "phases": {"decode": 0, "prefill": 1}}
    assert doc["target"]["id"] == "cpu-x86_64"
    assert doc["export_domain"] == {"seq": [1, 128]}
    assert doc["provenance"]["packages"]["executorch"] == version("executorch")
    assert doc["signature"]["present"] is False
    assert doc["pte"]["methods"][0]["name"] == "forward"
    assert doc["validation"] == {"ok": True, "phases": 2}


def test_bundle_tree_output(capsys: pytest.CaptureFixture[str], bundle: Path) -> None:
    assert main(["inspect", str(bundle)]) == 0
    out = capsys.readouterr().out
    for text in ("bundle tiny 1.0.0", "every hash matches", "prefill", "decode → 0", "cpu-x86_64"):
        assert text in out


@pytest.mark.parametrize(("suffix", "mode"), [(".tar", "w"), (".tar.gz", "w:gz")])
def test_bundle_tar_reads_like_the_directory(
    capsys: pytest.CaptureFixture[str],
    bundle: Path,
    tmp_path: Path,
    suffix: str,
    mode: Literal["w", "w:gz"],
) -> None:
    tar = pack(bundle, tmp_path / f"tiny{suffix}", mode)
    _, from_dir, _ = inspect_json(capsys, str(bundle))
    code, from_tar, err = inspect_json(capsys, str(tar))
    assert code == 0, err
    assert from_tar["container"] == "tar" and from_tar["hashes_ok"] is True
    for doc in (from_dir, from_tar):
        doc.pop("path"), doc.pop("container"), doc["pte"].pop("path")
    assert from_tar == from_dir


def test_tampered_model_fails_hash_check(capsys: pytest.CaptureFixture[str], bundle: Path) -> None:
    pte = bundle / "model.pte"
    data = bytearray(pte.read_bytes())
    data[-1] ^= 0xFF  # last byte of the last segment: still a readable program
    pte.write_bytes(bytes(data))
    code, doc, err = inspect_json(capsys, str(bundle))
    assert code == 1
    assert doc["hashes_ok"] is False
    assert "model.pte: sha256 " in err and "does not match bundle.json" in err
    assert {f["name"]: f["status"] for f in doc["files"]}["model.pte"] == "sha256_mismatch"


def test_truncated_listed_file_and_unlisted_file(
    capsys: pytest.CaptureFixture[str], bundle: Path
) -> None:
    report = bundle / "reports" / "validation.json"
    report.write_text("{}")
    (bundle / "extra.bin").write_bytes(b"x")
    code, _, err = inspect_json(capsys, str(bundle))
    assert code == 1
    assert "reports/validation.json: size 2 bytes, but bundle.json records" in err
    assert "extra.bin: extra file not listed in bundle.json" in err
    report.unlink()
    code, _, err = inspect_json(capsys, str(bundle))
    assert "reports/validation.json: listed in bundle.json but missing" in err


def test_bundle_json_that_does_not_describe_the_pte(
    capsys: pytest.CaptureFixture[str], xnnpack_pte: Path, tmp_path: Path
) -> None:
    d = read_pte(xnnpack_pte).delegates[0]
    wrong = d.to_delegate_info()
    wrong = type(wrong)(wrong.backend_id, wrong.method, wrong.index, wrong.blob_size + 1, None)
    b = decoder_bundle(tmp_path / "b", xnnpack_pte, delegates=(wrong,))
    code, _, err = inspect_json(capsys, str(b))
    assert code == 1
    assert "bundle.json lists delegate 0 of method 'forward'" in err


def test_profile_signature_mismatch_in_bundle(
    capsys: pytest.CaptureFixture[str], xnnpack_pte: Path, tmp_path: Path
) -> None:
    d = read_pte(xnnpack_pte).delegates[0]
    b = decoder_bundle(tmp_path / "b", xnnpack_pte)
    doc = json.loads((b / "bundle.json").read_text())
    m = BundleManifest.from_dict(doc)
    sig = profile_signature(m.profiles, m.inputs)
    other = profile_signature(m.profiles[::-1], m.inputs)
    doc["delegates"] = [
        {**d.to_dict(), "backend_id": "TensorRTBackend", "profile_signature": sig},
        {**d.to_dict(), "index": 1, "backend_id": "TensorRTBackend", "profile_signature": other},
    ]
    for k in ("location", "data_index", "offset", "compile_specs"):
        for entry in doc["delegates"]:
            entry.pop(k)
    (b / "bundle.json").write_text(json.dumps(doc))
    code, out, err = inspect_json(capsys, str(b))
    assert code == 1
    assert "differ first at index 0" in err
    assert out["profile_signatures"] != "ok"


def test_broken_bundle_json_exits_2_with_location(
    capsys: pytest.CaptureFixture[str], bundle: Path
) -> None:
    (bundle / "bundle.json").write_text('{"schema_version": 1,\n  "model": }')
    assert main(["inspect", str(bundle)]) == 2
    err = capsys.readouterr().err
    assert "bundle.json:2:" in err and "not valid JSON" in err


def test_inspect_does_not_import_torch_or_executorch(xnnpack_pte: Path, bundle: Path) -> None:
    probe = (
        "import sys; from trt_edge.cli.main import main; "
        f"codes = [main(['inspect', {str(xnnpack_pte)!r}, '--json']), "
        f"main(['inspect', {str(bundle)!r}])]; "
        "heavy = [m for m in ('torch', 'executorch', 'docker') if m in sys.modules]; "
        "print('HEAVY', heavy, codes, file=sys.stderr)"
    )
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert "HEAVY [] [0, 0]" in proc.stderr, proc.stderr


def test_unreadable_model_in_bundle_is_reported_with_the_hash_check(
    capsys: pytest.CaptureFixture[str], bundle: Path
) -> None:
    pte = bundle / "model.pte"
    pte.write_bytes(pte.read_bytes()[:100])
    code, doc, err = inspect_json(capsys, str(bundle))
    assert code == 1
    assert "model.pte: size 100 bytes, but bundle.json records" in err
    assert "not a readable ExecuTorch program" in err
    assert doc["pte"] is None and str(pte) in doc["pte_error"]
    assert main(["inspect", str(bundle)]) == 1
    assert "model.pte:" in capsys.readouterr().out


@pytest.mark.parametrize("container", ["dir", "tar.gz"])
def test_extract_engines_from_a_bundle(
    capsys: pytest.CaptureFixture[str], tensorrt_pte: Path, tmp_path: Path, container: str
) -> None:
    """SYNTHETIC TensorRT bundle (placeholder engines): extraction works through bundles,
    including a compressed tar whose model.pte is extracted to a private temp file."""
    b = decoder_bundle(tmp_path / "trt-1.0.0", tensorrt_pte)
    path = b if container == "dir" else pack(b, tmp_path / "trt.tar.gz", "w:gz")
    out_dir = tmp_path / "engines"
    assert main(["inspect", str(path), "--extract-engines", str(out_dir)]) == 0
    assert "extracted 2 TensorRT engine(s)" in capsys.readouterr().out
    payloads = {p.read_bytes() for p in out_dir.glob("*.engine")}
    assert payloads == {placeholder_engine(300, 1), placeholder_engine(200, 2)}


def test_listed_name_outside_the_bundle_is_refused_and_never_read(
    capsys: pytest.CaptureFixture[str], bundle: Path
) -> None:
    doc = json.loads((bundle / "bundle.json").read_text())
    outside = bundle.parent / "secret.txt"
    outside.write_text("not part of the bundle")
    doc["files"]["../secret.txt"] = {"sha256": "0" * 64, "size": 22}
    (bundle / "bundle.json").write_text(json.dumps(doc))
    code, out, err = inspect_json(capsys, str(bundle))
    assert code == 1
    assert "../secret.txt: is not a plain relative path inside the bundle" in err
    entry = next(f for f in out["files"] if f["name"] == "../secret.txt")
    assert entry["status"] == "outside" and entry["actual_sha256"] is None


def test_tar_that_is_not_a_bundle_exits_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    fake = tmp_path / "fake.tar"
    fake.write_bytes(b"not a tar at all" * 40)
    assert main(["inspect", str(fake)]) == 2
    assert "not a readable tar archive" in capsys.readouterr().err
    other = tmp_path / "other"
    other.mkdir()
    (other / "readme.txt").write_text("hi")
    archive = tmp_path / "other.tar"
    with tarfile.open(archive, "w") as tar:
        tar.add(other, arcname=other.name)
    assert main(["inspect", str(archive)]) == 2
    assert "has no bundle.json" in capsys.readouterr().err


def _rename_methods(source: Path, dest: Path, names: dict[str, str]) -> Path:
    """A copy of `source` whose methods are renamed (ExecuTorch's own (de)serializer)."""
    from executorch.exir._serialize._program import deserialize_pte_binary, serialize_pte_binary

    pte = deserialize_pte_binary(source.read_bytes())
    for plan in pte.program.execution_plan:
        plan.name = names.get(plan.name, plan.name)
    dest.write_bytes(bytes(serialize_pte_binary(pte, extract_delegate_segments=True)))
    return dest


def test_extract_engines_keeps_hostile_method_names_inside_the_directory(
    capsys: pytest.CaptureFixture[str], tensorrt_pte: Path, tmp_path: Path
) -> None:
    evil = _rename_methods(
        tensorrt_pte, tmp_path / "evil.pte", {"prefill": "../evil", "decode": "/abs\\x\x00y"}
    )
    assert {d.method for d in read_pte(evil).delegates} == {"../evil", "/abs\\x\x00y"}
    out_dir = tmp_path / "ev" / "out"
    code, _doc, err = inspect_json(capsys, str(evil), "--extract-engines", str(out_dir))
    assert code == 0, err
    written = sorted(p.name for p in out_dir.iterdir())
    assert written == ["__evil-0.engine", "__evil-0.json", "_abs_x_y-0.engine", "_abs_x_y-0.json"]
    assert sorted(p.name for p in (tmp_path / "ev").iterdir()) == ["out"]
    assert not (tmp_path / "evil-0.engine").exists()
    meta = json.loads((out_dir / "__evil-0.json").read_text())
    assert meta["delegate"]["method"] == "../evil"  # the original name is kept


def test_extract_engines_refuses_a_symlink_pointing_outside(
    capsys: pytest.CaptureFixture[str], tensorrt_pte: Path, tmp_path: Path
) -> None:
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    outside = tmp_path / "outside.engine"
    (out_dir / "prefill-0.engine").symlink_to(outside)
    code = main(["inspect", str(tensorrt_pte), "--extract-engines", str(out_dir)])
    err = capsys.readouterr().err
    assert code == 2 and "outside --extract-engines directory" in err
    assert not outside.exists()


def test_extract_engines_into_an_existing_file_names_the_option(
    capsys: pytest.CaptureFixture[str], tensorrt_pte: Path, tmp_path: Path
) -> None:
    in_the_way = tmp_path / "engines"
    in_the_way.write_text("not a directory")
    assert main(["inspect", str(tensorrt_pte), "--extract-engines", str(in_the_way)]) == 2
    err = capsys.readouterr().err
    assert f"--extract-engines {in_the_way}: exists and is a file; name a directory" in err
    assert str(tensorrt_pte) not in err and "Traceback" not in err
    nested = in_the_way / "sub"
    assert main(["inspect", str(tensorrt_pte), "--extract-engines", str(nested)]) == 2
    assert f"--extract-engines {nested}: cannot be created: {in_the_way} is a file" in (
        capsys.readouterr().err
    )
