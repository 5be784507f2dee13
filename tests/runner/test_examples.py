"""The runners on the example bundles the real pipeline built (the session fixtures)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import tarfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from trt_edge.pipeline.bundle_tar import write_bundle_tar
from trt_edge_runner.errors import ProfileMismatchError
from trt_edge_runner.policy import Request
from trt_edge_runner.runner import Runner
from trt_edge_runner.tensors import random_inputs

pytestmark = pytest.mark.slow

VISION_PY = Path(__file__).resolve().parents[2] / "examples" / "vision" / "model.py"


def vision_eager(images: np.ndarray) -> Any:
    import torch

    spec = importlib.util.spec_from_file_location("vision_model_eager", VISION_PY)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with torch.no_grad():
        return module.build_model()(torch.from_numpy(images)).numpy()


def test_vision_auto_walks_batch_profiles_and_matches_eager(vision_bundle: Path) -> None:
    runner = Runner.open(vision_bundle)
    seen = []
    for batch in (1, 4, 16, 32, 3):
        (images,) = random_inputs(runner.manifest, {"batch": batch}, seed=batch)
        result = runner.run("infer", [images])
        seen.append(result.profile)
        # The largest batch (32) comes from the last profile: the output fits the envelope.
        np.testing.assert_allclose(result.outputs[0], vision_eager(images), rtol=1e-4, atol=1e-4)
    assert seen == [0, 1, 2, 2, 1]
    with pytest.raises(ProfileMismatchError, match="profile 2 \\('large'\\)"):
        runner.run(Request.auto(), random_inputs(runner.manifest, {"batch": 33}, seed=0))


def test_tiny_llm_bundle_from_a_deterministic_tar_runs(
    tiny_llm_bundle: Path, tmp_path: Path
) -> None:
    archive = write_bundle_tar(tiny_llm_bundle, tmp_path / "bundle.tar")
    with tarfile.open(archive) as tar:
        tar.extractall(tmp_path / "device", filter="data")
    unpacked = tmp_path / "device" / tiny_llm_bundle.name
    direct, shipped = Runner.open(tiny_llm_bundle), Runner.open(unpacked)
    inputs = random_inputs(direct.manifest, {"seq": 20}, seed=3)
    inputs[1] = np.array([0], dtype=np.int64)
    a, b = direct.run("prefill", inputs), shipped.run("prefill", inputs)
    assert a.profile == b.profile == 1
    for x, y in zip(a.outputs, b.outputs, strict=True):
        np.testing.assert_array_equal(x, y)


def test_cpp_matches_python_on_the_vision_bundle(
    trt_edge_run: Path, vision_bundle: Path, tmp_path: Path
) -> None:
    runner = Runner.open(vision_bundle)
    (images,) = random_inputs(runner.manifest, {"batch": 12}, seed=12)
    (tmp_path / "in").mkdir()
    np.save(tmp_path / "in" / "image.npy", images)
    proc = subprocess.run(
        [str(trt_edge_run), "--bundle", str(vision_bundle), "--phase", "infer", "--inputs",
         str(tmp_path / "in"), "--outputs", str(tmp_path / "out"), "--json"],
        capture_output=True, text=True, check=False, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.strip().splitlines()[-1])["profile"] == 2
    expected = runner.run("infer", [images])
    name = runner.manifest.outputs[0].name if runner.manifest.outputs else "output_0"
    np.testing.assert_allclose(
        np.load(tmp_path / "out" / f"{name}.npy"), expected.outputs[0], rtol=1e-6, atol=1e-6
    )
