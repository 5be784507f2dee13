"""Backend choice: `auto` follows the target and falls back to XNNPACK saying why; a TensorRT
flavour that cannot build here fails in one message."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from trt_edge.manifest import load_manifest_or_raise
from trt_edge.pipeline.errors import BackendUnavailableError, BadInputError
from trt_edge.pipeline.lower import choose_backend, get_backend, require_fp32
from trt_edge.pipeline.lower.trt_engine import profile_shapes
from trt_edge.targets import load_catalog

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

no_tensorrt = pytest.mark.skipif(
    importlib.util.find_spec("tensorrt") is not None,
    reason="regular TensorRT is installed here: its absent path cannot be observed",
)


@no_tensorrt
def test_auto_on_a_regular_tensorrt_target_uses_xnnpack_and_says_why() -> None:
    choice = choose_backend("auto", load_catalog().get("jetson-orin-nano-jp6"))
    assert choice.backend.name == "xnnpack"
    assert "tensorrt is not installed" in choice.reason


def test_auto_on_a_cpu_target_is_xnnpack_whatever_this_machine_has() -> None:
    choice = choose_backend("auto", load_catalog().get("cpu-x86_64"))
    assert choice.backend.name == "xnnpack" and "runs on the CPU" in choice.reason


def test_auto_on_an_rtx_target_builds_tensorrt_rtx_without_a_gpu() -> None:
    choice = choose_backend("auto", load_catalog().get("x86-rtx-ada"))
    assert choice.backend.name == "tensorrt"
    assert choice.backend.identity()["flavour"] == "tensorrt_rtx"
    assert choice.backend.identity()["compute_capabilities"] == ["8.9"]


@no_tensorrt
def test_explicit_tensorrt_fails_with_one_clear_message() -> None:
    with pytest.raises(BackendUnavailableError) as info:
        choose_backend("tensorrt", load_catalog().get("x86-ada"))
    assert info.value.exit_code == 2
    assert "backend 'tensorrt' cannot run here: tensorrt is not installed" in str(info.value)
    hint = info.value.hint or ""  # what to do is the error's hint, its own line in the CLI
    assert "--container" in hint and "--backend xnnpack" in hint


def test_cpu_backends_are_available_here() -> None:
    assert get_backend("xnnpack").unavailable_reason() is None
    assert get_backend("portable").unavailable_reason() is None


def test_unknown_backend_is_bad_input() -> None:
    with pytest.raises(BadInputError, match="unknown backend 'cuda'"):
        get_backend("cuda")


def test_cpu_backends_refuse_reduced_precision_naming_the_manifest_line(tmp_path: Path) -> None:
    text = (EXAMPLES / "vision" / "manifest.yaml").read_text()
    path = tmp_path / "manifest.yaml"
    path.write_text(text.replace("precision: fp32", "precision: fp16"))
    (tmp_path / "model.py").write_text((EXAMPLES / "vision" / "model.py").read_text())
    manifest = load_manifest_or_raise(path)
    with pytest.raises(BadInputError) as info:
        require_fp32(manifest, "xnnpack")
    line = next(i for i, t in enumerate(path.read_text().splitlines(), 1) if "precision:" in t)
    assert f"{path}:{line}:" in str(info.value)
    assert "only supported by the tensorrt backend" in str(info.value)


def test_tensorrt_profiles_carry_every_profile_in_manifest_order() -> None:
    manifest = load_manifest_or_raise(EXAMPLES / "tiny_llm" / "manifest.yaml")
    # Only dynamic inputs get shapes per profile; static ones (start_pos, caches) need none.
    assert profile_shapes(manifest) == [
        {"input_ids": ((1, 1), (1, 1), (1, 1))},  # 0 decode
        {"input_ids": ((1, 2), (1, 128), (1, 512))},  # 1 prefill
    ]


def test_target_outside_the_manifest_is_refused_before_any_work(tmp_path: Path) -> None:
    from trt_edge.pipeline.run import BuildOptions, build

    with pytest.raises(BadInputError) as info:
        build(
            EXAMPLES / "vision" / "manifest.yaml",
            BuildOptions(out_dir=tmp_path / "out", cache_dir=tmp_path / "c", target="x86-ada"),
        )
    assert "--target x86-ada" in str(info.value)
    assert "cpu-x86_64, cpu-aarch64, x86-rtx only" in str(info.value)
    assert info.value.exit_code == 2
    assert not (tmp_path / "out").exists() and not (tmp_path / "c").exists()
