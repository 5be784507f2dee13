"""Real TensorRT engines, built here: the manifest's profiles through TensorRT-RTX's builder.

No GPU is needed to build a TensorRT-RTX engine (CPU-only ahead-of-time), so every test here
runs the real exporter, the real ONNX parser and the real builder, and reads what they
produced back from the bundle. Running an engine needs a CUDA driver: that half is refused
clearly here, and checked where a GPU is lent (docs/tensorrt.md).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from trt_edge.inspect.pte_reader import read_delegate_blob, read_pte
from trt_edge.inspect.trt_blob import parse_trt_blob
from trt_edge.manifest import load_manifest_or_raise
from trt_edge.pipeline.errors import LoweringError
from trt_edge.pipeline.lower.trt_engine import profile_shapes
from trt_edge.pipeline.run import BuildOptions, BuildResult, build
from trt_edge_runner.errors import RunnerError
from trt_edge_runner.runner import Runner

from tests.inspect.test_trt_blob_upstream import upstream  # noqa: F401  (a fixture)
from tests.pipeline.conftest import SMALL_MANIFEST, WriteProject, linear_model

pytestmark = pytest.mark.slow
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _example(tmp: Path, name: str) -> Path:
    shutil.copytree(EXAMPLES / name, tmp / name)
    return tmp / name / "manifest.yaml"


def _build(manifest: Path, tmp: Path, target: str = "x86-rtx", **kw: Any) -> BuildResult:
    return build(
        manifest,
        BuildOptions(
            out_dir=tmp / "out",
            cache_dir=tmp / "cache",
            source_date_epoch=0,
            backend="tensorrt",
            target=target,
            **kw,
        ),
    )


@pytest.fixture(scope="module")
def tiny_llm(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, BuildResult]:
    tmp = tmp_path_factory.mktemp("trt-tiny-llm")
    manifest = _example(tmp, "tiny_llm")
    return manifest, _build(manifest, tmp)


def _bundle(result: BuildResult) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((result.bundle_dir / "bundle.json").read_text())
    return doc


def test_builder_is_given_the_manifests_profiles_in_order(
    tiny_llm: tuple[Path, BuildResult],
) -> None:
    manifest_path, result = tiny_llm
    doc = _bundle(result)
    (delegate,) = doc["delegates"]
    assert delegate["backend_id"] == "TensorRTBackend"
    engine = delegate["engine"]
    assert engine["flavour"] == "tensorrt_rtx" and engine["version"] == "1.7.1.116"
    # What the builder holds (read back from its IOptimizationProfile objects) is the manifest.
    assert [p["name"] for p in engine["profiles"]] == ["decode", "prefill"]
    assert engine["profiles"][0]["shapes"] == {
        "input_ids": {"min": [1, 1], "opt": [1, 1], "max": [1, 1]}
    }
    assert engine["profiles"][1]["shapes"] == {
        "input_ids": {"min": [1, 2], "opt": [1, 128], "max": [1, 512]}
    }
    manifest = load_manifest_or_raise(manifest_path)
    wanted = profile_shapes(manifest)
    got = [
        {n: (tuple(r["min"]), tuple(r["opt"]), tuple(r["max"])) for n, r in p["shapes"].items()}
        for p in engine["profiles"]
    ]
    assert got == wanted
    assert [t["name"] for t in engine["inputs"]] == ["input_ids", "start_pos", "k_cache", "v_cache"]
    assert engine["inputs"][0] == {"name": "input_ids", "dtype": "INT64", "shape": [1, -1]}
    assert [t["name"] for t in engine["outputs"]] == ["output_0", "output_1", "output_2"]
    assert engine["compute_capabilities"] == ["8.0", "8.6", "8.9", "12.0"]  # catalog x86-rtx
    # The builder's own memory report: weights once, activations per profile (prefill's larger).
    assert engine["weights_bytes"] > 0
    assert len(engine["activation_bytes"]) == 2
    assert engine["activation_bytes"][1] > engine["activation_bytes"][0]
    # The memory budget counts the engine: its largest profile's activations are planned.
    assert doc["memory"]["planned_bytes"] >= max(engine["activation_bytes"])
    assert doc["memory"]["weights_bytes"] >= engine["engine_bytes"]
    assert doc["target"] == {
        "arch": "x86_64",
        "id": "x86-rtx",
        "kind": "x86",
        "sm": "8.0,8.6,8.9,12.0",
        "tensorrt_rtx": "1.7",
    }
    signatures = doc["provenance"]["profile_signatures"]
    assert signatures["signature_source"] == "builder"
    assert signatures["cross_delegate_check"] == "compared recorded signatures"
    (timing,) = doc["provenance"]["engine_builds"]
    assert timing["engine_sha256"] == engine["engine_sha256"] and timing["build_seconds"] > 0


def test_the_engine_sits_in_an_upstream_tr01_blob(
    tiny_llm: tuple[Path, BuildResult],
    upstream: ModuleType,  # noqa: F811
) -> None:
    import hashlib

    _, result = tiny_llm
    pte = result.bundle_dir / "model.pte"
    (entry,) = read_pte(pte).delegates
    data = read_delegate_blob(pte, entry)
    ours = parse_trt_blob(data)
    engine, metadata = upstream.deserialize_engine(data)
    record = _bundle(result)["delegates"][0]["engine"]
    assert hashlib.sha256(engine).hexdigest() == record["engine_sha256"]
    assert len(engine) == record["engine_bytes"] == ours.engine_size
    # Upstream's runtime binds call argument i to input binding i, output j to output j.
    assert [(b.name, b.is_input) for b in metadata.io_bindings] == [
        ("input_ids", True),
        ("start_pos", True),
        ("k_cache", True),
        ("v_cache", True),
        ("output_0", False),
        ("output_1", False),
        ("output_2", False),
    ]
    assert upstream.serialize_engine(engine, metadata) == bytes(data)
    # The delegate takes the program's four inputs, and nothing else.
    assert len(read_pte(pte).method("forward").inputs) == 4


def test_validation_says_the_engine_was_built_not_run(tiny_llm: tuple[Path, BuildResult]) -> None:
    _, result = tiny_llm
    report = json.loads((result.bundle_dir / "reports" / "validation.json").read_text())
    assert report["ok"] is True and report["runner_mode"] == "not run"
    assert report["execution"]["ran"] is False
    assert "TensorRTBackend" in report["execution"]["reason"]
    (engine,) = report["engines"]
    assert engine["checks"] == {
        "record": True,
        "profile_count": True,
        "profiles_as_manifest": True,
        "inputs_as_manifest": True,
        "output_count": True,
        "engine_inside_blob": True,
    }
    assert "parity" not in report  # no invented results


def test_runner_refuses_a_tensorrt_rtx_bundle_naming_what_is_missing(
    tiny_llm: tuple[Path, BuildResult],
) -> None:
    _, result = tiny_llm
    with pytest.raises(RunnerError) as info:
        Runner.open(result.bundle_dir)
    text = str(info.value)
    assert "TensorRT-RTX 1.7.1.116 engines (compute capability 8.0, 8.6, 8.9, 12.0)" in text
    assert "no ExecuTorch runtime backend runs TensorRT-RTX engines" in text
    assert "libnvinfer" in text


def _vision_for_ada(tmp: Path, precision: str) -> dict[str, Any]:
    """bundle.json of the vision example built for `x86-rtx-ada` at `precision`."""
    manifest = _example(tmp, "vision")
    text = manifest.read_text().replace("x86-rtx]", "x86-rtx, x86-rtx-ada]")
    manifest.write_text(text.replace("precision: fp32", f"precision: {precision}"))
    return _bundle(_build(manifest, tmp, target="x86-rtx-ada"))


@pytest.fixture(scope="module")
def vision_fp32(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return _vision_for_ada(tmp_path_factory.mktemp("trt-vision-fp32"), "fp32")


def test_target_chooses_the_compute_capabilities(vision_fp32: dict[str, Any]) -> None:
    doc = vision_fp32
    engine = doc["delegates"][0]["engine"]
    assert engine["compute_capabilities"] == ["8.9"] and doc["target"]["sm"] == "8.9"
    # The vision model's batch profiles, in order, on its one input.
    assert [p["shapes"]["image"] for p in engine["profiles"]] == [
        {"min": [1, 3, 32, 32], "opt": [1, 3, 32, 32], "max": [1, 3, 32, 32]},
        {"min": [2, 3, 32, 32], "opt": [4, 3, 32, 32], "max": [8, 3, 32, 32]},
        {"min": [9, 3, 32, 32], "opt": [16, 3, 32, 32], "max": [32, 3, 32, 32]},
    ]
    assert engine["outputs"] == [{"name": "output_0", "dtype": "FLOAT", "shape": [-1, 10]}]


def test_fp16_on_a_strongly_typed_flavour_is_the_networks_own_type(
    vision_fp32: dict[str, Any], tmp_path: Path
) -> None:
    half = _vision_for_ada(tmp_path, "fp16")["delegates"][0]["engine"]
    full = vision_fp32["delegates"][0]["engine"]
    assert half["precision"] == "fp16" and full["precision"] == "fp32"
    # The engine's I/O keeps the manifest's dtypes (cast at the edges), its profiles too ...
    assert (half["inputs"], half["outputs"]) == (full["inputs"], full["outputs"])
    assert half["profiles"] == full["profiles"]
    # ... and the builder's own memory report says the weights it holds are fp16: the
    # conv/linear weights halve (the CNN's few biases and norms are a fixed remainder).
    assert half["weights_bytes"] < 0.7 * full["weights_bytes"], (half, full)


def test_fp16_of_a_model_that_fixes_its_own_dtypes_names_why_and_the_way_out(
    tmp_path: Path,
) -> None:
    manifest = _example(tmp_path, "tiny_llm")  # rotary angles and the write mask: fp32
    manifest.write_text(manifest.read_text().replace("precision: fp32", "precision: fp16"))
    with pytest.raises(LoweringError) as info:
        _build(manifest, tmp_path)
    assert "must have identical types" in str(info.value)
    assert info.value.hint is not None and "build.precision: fp32" in info.value.hint


def _line_of(path: Path, needle: str) -> int:
    return next(i for i, t in enumerate(path.read_text().splitlines(), 1) if needle in t)


def _rtx_manifest(**fields: str) -> str:
    text = SMALL_MANIFEST.replace("targets: [cpu-x86_64]", "targets: [x86-rtx]")
    return text.format(
        **{
            "name": "small",
            "entrypoint": "model.py:build",
            "backend": "tensorrt",
            "atol": "1.0e-05",
            **fields,
        }
    )


def test_an_operator_tensorrt_cannot_convert_is_refused_at_the_model_line(
    write_project: WriteProject, tmp_path: Path
) -> None:
    model = linear_model("return torch.fft.rfft(self.linear(x)).abs()")
    path = write_project(model, manifest=_rtx_manifest())
    with pytest.raises(LoweringError) as info:
        _build(path, tmp_path)
    text = str(info.value)
    assert f"{path}:{_line_of(path, 'entrypoint:')}:" in text
    assert "TensorRT cannot convert the model" in text
    assert re.search(r"node \S*DFT\S* \(DFT\)", text), text


def test_an_operator_the_exporter_cannot_convert_is_refused_with_its_name(
    write_project: WriteProject, tmp_path: Path
) -> None:
    model = linear_model("return torch.cumprod(self.linear(x), -1)")  # decomposes to prims.prod
    path = write_project(model, manifest=_rtx_manifest())
    with pytest.raises(LoweringError) as info:
        _build(path, tmp_path)
    text = str(info.value)
    assert f"{path}:{_line_of(path, 'entrypoint:')}:" in text
    assert "ONNX exporter cannot convert the model" in text
    assert "(operator prims.prod.default)" in text
    assert "No ONNX function found" in text


def test_a_precision_a_strongly_typed_flavour_cannot_take_is_refused_at_its_line(
    write_project: WriteProject, tmp_path: Path
) -> None:
    path = write_project(manifest=_rtx_manifest().replace("precision: fp32", "precision: bf16"))
    with pytest.raises(LoweringError) as info:
        _build(path, tmp_path)
    assert f"{path}:{_line_of(path, 'precision:')}:" in str(info.value)
    assert "strongly typed" in str(info.value) and "fp32 or fp16" in str(info.value)


def test_a_program_with_mutable_buffers_is_refused_before_any_engine_is_built(
    write_project: WriteProject, tmp_path: Path
) -> None:
    model = linear_model(
        "self.seen.add_(1.0)\nreturn self.linear(x) + self.seen",
        init="self.register_buffer('seen', torch.zeros(3))",
    )
    path = write_project(model, manifest=_rtx_manifest())
    with pytest.raises(LoweringError) as info:
        _build(path, tmp_path)
    assert "mutable buffers" in str(info.value) and "seen" in str(info.value)


def test_inspect_shows_the_engine_record_and_engines_needs_a_driver(
    tiny_llm: tuple[Path, BuildResult], capsys: pytest.CaptureFixture[str]
) -> None:
    from trt_edge.cli.main import main

    _, result = tiny_llm
    assert main(["inspect", str(result.bundle_dir)]) == 0
    out = capsys.readouterr().out
    assert "engine: tensorrt_rtx 1.7.1.116" in out
    assert "profile 1 prefill: input_ids min [1, 2] opt [1, 128] max [1, 512]" in out
    # Reading the engine back needs a CUDA driver: refused, naming the reason and the SMs.
    code = main(["inspect", str(result.bundle_dir), "--engines"])
    err = capsys.readouterr().err
    assert code == 2
    assert "could not deserialize the engine" in err and "cudaError 35" in err
    assert "8.0, 8.6, 8.9, 12.0" in err


def test_diff_names_what_differs_in_the_engine_records(
    tiny_llm: tuple[Path, BuildResult], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same manifest built for another RTX family: `trt-edge diff` says the engine was
    built for other compute capabilities (its record in bundle.json), and nothing of the
    profiles changed."""
    from trt_edge.cli.main import main

    manifest, result = tiny_llm
    text = manifest.read_text()
    ada = manifest.with_name("manifest-ada.yaml")
    ada.write_text(text.replace("x86-rtx]", "x86-rtx, x86-rtx-ada]"))
    other = _build(ada, tmp_path, target="x86-rtx-ada")
    capsys.readouterr()  # the build's log lines
    assert main(["diff", str(result.bundle_dir), str(other.bundle_dir), "--json"]) == 1
    changes = json.loads(capsys.readouterr().out)["changes"]
    engine_paths = {c["path"] for c in changes if c["path"].startswith("engines.")}
    assert "engines.forward[0].compute_capabilities" in engine_paths, changes
    assert not any(".profiles" in p for p in engine_paths), engine_paths
