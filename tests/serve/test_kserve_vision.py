"""KServe v2 on a bundle that is not an LLM (the vision example: batch profiles 1 / 2-8 /
9-32 under `auto`): `tritonclient` infers without naming a phase (the bundle has one), the
engine picks the profile from the batch, and the outputs equal a one-shot `trt-edge-run`
on the same inputs; the OpenAI routes refuse it by name."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import httpx
import numpy as np
import pytest
import tritonclient.http as triton
from tritonclient.utils import InferenceServerException

from tests.serve.conftest import Served

pytestmark = [pytest.mark.slow]


@pytest.fixture(scope="module")
def served(serve_bundle: Callable[..., Served], vision_bundle: Path) -> Served:
    return serve_bundle(vision_bundle)


def one_shot(runner: Path, bundle: Path, image: np.ndarray, work: Path) -> np.ndarray:
    """The runner's own answer for `image` (auto request, inputs from .npy)."""
    inputs, outputs = work / "in", work / "out"
    inputs.mkdir()
    np.save(inputs / "image.npy", image)
    argv = [str(runner), "--bundle", str(bundle), "--auto", "--inputs", str(inputs)]
    subprocess.run([*argv, "--outputs", str(outputs)], check=True, capture_output=True)
    (found,) = sorted(outputs.glob("*.npy"))
    answer: np.ndarray = np.load(found)
    return answer


@pytest.mark.parametrize(("batch", "profile"), [(1, 0), (4, 1), (12, 2)])
def test_infer_picks_the_profile_of_the_batch_and_matches_the_runner(
    served: Served,
    vision_bundle: Path,
    trt_edge_run: Path,
    tmp_path: Path,
    batch: int,
    profile: int,
) -> None:
    client = triton.InferenceServerClient(served.url.removeprefix("http://"))
    image = np.random.default_rng(batch).standard_normal((batch, 3, 32, 32), dtype=np.float32)
    data = triton.InferInput("image", list(image.shape), "FP32")
    data.set_data_from_numpy(image)
    result = client.infer("tiny-cnn", [data])
    assert result.get_response()["parameters"]["profile"] == profile
    (output,) = result.get_response()["outputs"]
    served_out = result.as_numpy(output["name"])
    np.testing.assert_array_equal(
        served_out, one_shot(trt_edge_run, vision_bundle, image, tmp_path)
    )


def test_a_batch_no_profile_takes_is_a_400_naming_the_input(served: Served) -> None:
    client = triton.InferenceServerClient(served.url.removeprefix("http://"))
    data = triton.InferInput("image", [40, 3, 32, 32], "FP32")
    data.set_data_from_numpy(np.zeros((40, 3, 32, 32), dtype=np.float32))
    with pytest.raises(InferenceServerException) as caught:
        client.infer("tiny-cnn", [data])
    assert caught.value.status() == "400"
    assert "image" in str(caught.value.message())


def test_the_openai_routes_refuse_a_tensor_bundle_by_name(served: Served) -> None:
    response = httpx.post(f"{served.url}/v1/completions", json={"prompt": "x"}, timeout=30)
    assert response.status_code == 400
    assert "not a causal LM" in response.json()["error"]["message"]
    assert "/v2/models/tiny-cnn/infer" in response.json()["error"]["message"]
