"""Backend choice: `auto` falls back to XNNPACK and says why; TensorRT fails in one message."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from trt_edge.manifest import load_manifest_or_raise
from trt_edge.pipeline.errors import BackendUnavailableError, BadInputError
from trt_edge.pipeline.lower import choose_backend, get_backend, require_fp32

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

no_tensorrt = pytest.mark.skipif(
    importlib.util.find_spec("torch_tensorrt") is not None,
    reason="torch_tensorrt is installed here: the absent-TensorRT path cannot be observed",
)


@no_tensorrt
def test_auto_uses_xnnpack_and_says_why() -> None:
    choice = choose_backend("auto")
    assert choice.backend.name == "xnnpack"
    assert "torch_tensorrt is not installed" in choice.reason


@no_tensorrt
def test_explicit_tensorrt_fails_with_one_clear_message() -> None:
    with pytest.raises(BackendUnavailableError) as info:
        choose_backend("tensorrt")
    assert info.value.exit_code == 2
    assert "backend 'tensorrt' cannot run here: torch_tensorrt is not installed" in str(info.value)
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


def test_tensorrt_inputs_carry_every_profile_in_manifest_order() -> None:
    from trt_edge.pipeline.lower.tensorrt import input_profiles

    manifest = load_manifest_or_raise(EXAMPLES / "tiny_llm" / "manifest.yaml")
    ids, start_pos, k_cache, _v = input_profiles(manifest)
    assert ids == {
        "dtype": "int64",
        "profiles": [
            {"min_shape": (1, 1), "opt_shape": (1, 1), "max_shape": (1, 1)},  # 0 decode
            {"min_shape": (1, 2), "opt_shape": (1, 128), "max_shape": (1, 512)},  # 1 prefill
        ],
    }
    assert start_pos == {"shape": (1,), "dtype": "int64"}
    assert k_cache == {"shape": (2, 1, 4, 640, 16), "dtype": "float32"}


def test_target_outside_the_manifest_is_refused_before_any_work(tmp_path: Path) -> None:
    from trt_edge.pipeline.run import BuildOptions, build

    with pytest.raises(BadInputError) as info:
        build(
            EXAMPLES / "vision" / "manifest.yaml",
            BuildOptions(out_dir=tmp_path / "out", cache_dir=tmp_path / "c", target="x86-ada"),
        )
    assert "--target x86-ada" in str(info.value)
    assert "cpu-x86_64, cpu-aarch64 only" in str(info.value)
    assert info.value.exit_code == 2
    assert not (tmp_path / "out").exists() and not (tmp_path / "c").exists()
