"""A Hugging Face build that cannot work stops early, with the place and what to do."""

from __future__ import annotations

import importlib.metadata
import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from trt_edge.pipeline.errors import ModelSourceError
from trt_edge.pipeline.requirements import RequirementsNotMetError
from trt_edge.pipeline.run import BuildOptions, build
from trt_edge_runner.errors import EXIT_BAD_INPUT

pytestmark = pytest.mark.slow

MANIFEST = """\
apiVersion: trt-edge/v1
kind: Model
metadata: {{name: mini, version: 0.1.0}}
model:
  huggingface: {{path: ./folder, max_cache_len: 32}}
  requirements: [{requirements}]
profiles:
  - {{name: decode, dims: {{seq: 1}}}}
  - {{name: prefill, dims: {{seq: {{min: 2, opt: 8, max: 16}}}}}}
build: {{backend: xnnpack}}
"""


def _fake_folder(folder: Path) -> None:
    """Enough for the manifest checks (they never read weights)."""
    folder.mkdir()
    config = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "vocab_size": 64}
    (folder / "config.json").write_text(json.dumps(config))
    (folder / "model.safetensors").write_bytes(b"")
    (folder / "tokenizer.json").write_text("{}")


def test_unmet_requirements_are_named_with_the_installed_version_and_the_fix(
    tmp_path: Path,
) -> None:
    _fake_folder(tmp_path / "folder")
    installed = importlib.metadata.version("transformers")
    lines = '"transformers==0.0.1", "numpy>=1", "no-such-package-trt-edge==1.0"'
    manifest = tmp_path / "manifest.yaml"
    manifest.write_text(MANIFEST.format(requirements=lines))
    with pytest.raises(RequirementsNotMetError) as caught:
        build(manifest, BuildOptions(out_dir=tmp_path / "out", cache_dir=tmp_path / "cache"))
    error = caught.value
    assert error.exit_code == EXIT_BAD_INPUT
    text = str(error)
    assert "2 model requirements are not met" in text
    assert (
        f"{manifest.resolve()}:6:18: transformers==0.0.1 is required but transformers "
        f"{installed} is installed"
    ) in text
    assert "no-such-package-trt-edge==1.0 is required but no-such-package-trt-edge is not " in text
    assert "numpy" not in text  # met: not mentioned
    assert error.hint == "run: pip install transformers==0.0.1 no-such-package-trt-edge==1.0"
    assert not (tmp_path / "cache").exists()  # refused before any stage ran


def test_a_manifest_mistake_is_bad_input_for_build_with_its_place(tmp_path: Path) -> None:
    manifest = tmp_path / "manifest.yaml"
    manifest.write_text(MANIFEST.format(requirements=""))  # no folder written
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "trt_edge",
            "build",
            str(manifest),
            "--local",
            "--out",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == EXIT_BAD_INPUT, done.stderr
    assert f"{manifest}:5:23: error: model.huggingface.path: folder " in done.stderr
    assert "does not exist" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.xdist_group("llm-llama")
def test_weights_transformers_cannot_load_are_a_model_source_error(
    tmp_path: Path, mini_project: Callable[[str], Path]
) -> None:
    source = mini_project("llama").parent
    shutil.copytree(source / "folder", tmp_path / "folder")
    shutil.copy(source / "manifest.yaml", tmp_path / "manifest.yaml")
    weights = tmp_path / "folder" / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:100])  # truncated: the header promises more
    with pytest.raises(ModelSourceError) as caught:
        build(
            tmp_path / "manifest.yaml",
            BuildOptions(out_dir=tmp_path / "out", cache_dir=tmp_path / "cache"),
        )
    text = str(caught.value)
    assert f"{(tmp_path / 'manifest.yaml').resolve()}:5:" in text
    assert f"transformers could not load {(tmp_path / 'folder').resolve()}" in text
    assert caught.value.hint and "save_pretrained" in caught.value.hint
