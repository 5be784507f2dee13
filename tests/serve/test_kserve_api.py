"""KServe v2 (Open Inference Protocol) with Triton's own client, `tritonclient[http]`, over the
real engine: health, metadata, infer under a phase / a pinned profile / auto, binary and JSON
tensors alike, and requests the bundle cannot serve refused with a 400 naming what."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest
import tritonclient.http as triton
from tritonclient.utils import InferenceServerException

from tests.serve.conftest import Served, bundle_doc
from tests.serve.test_openai_api import reference_tokens

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("llm-gemma3")]

PROMPT = [2, 40, 41, 42, 43, 44, 45, 46]


@pytest.fixture(scope="module")
def client(served: Served) -> triton.InferenceServerClient:
    return triton.InferenceServerClient(url=served.url.removeprefix("http://"))


@pytest.fixture(scope="module")
def name(bundle: Path) -> str:
    return str(bundle_doc(bundle)["model"]["name"])


def prompt_inputs(ids: list[int], binary: bool) -> list[triton.InferInput]:
    tokens = triton.InferInput("input_ids", [1, len(ids)], "INT64")
    tokens.set_data_from_numpy(np.array([ids], dtype=np.int64), binary_data=binary)
    positions = triton.InferInput("cache_position", [len(ids)], "INT64")
    positions.set_data_from_numpy(np.arange(len(ids), dtype=np.int64), binary_data=binary)
    # `attention: filled`: the attended window must cover the positions written.
    window = triton.InferInput("cache_window", [len(ids)], "INT64")
    window.set_data_from_numpy(np.arange(len(ids), dtype=np.int64), binary_data=binary)
    return [tokens, positions, window]


def test_health_and_metadata(client: triton.InferenceServerClient, name: str) -> None:
    assert client.is_server_live()
    assert client.is_server_ready()
    assert client.is_model_ready(name)
    meta = client.get_model_metadata(name)
    assert meta["name"] == name
    assert [(i["name"], i["datatype"], i["shape"]) for i in meta["inputs"]] == [
        ("input_ids", "INT64", [1, -1]),
        ("cache_position", "INT64", [-1]),
        ("cache_window", "INT64", [-1]),
    ]
    assert meta["parameters"]["phases"] == {"decode": 0, "prefill": 1}


def test_prefill_under_its_phase_gives_the_runners_first_token(
    client: triton.InferenceServerClient, name: str, bundle: Path, trt_edge_run: Path
) -> None:
    results = {}
    for binary in (True, False):
        result = client.infer(
            name,
            prompt_inputs(PROMPT, binary),
            outputs=[triton.InferRequestedOutput("output_0", binary_data=binary)],
            parameters={"phase": "prefill"},
        )
        results[binary] = result.as_numpy("output_0")
        response = result.get_response()
        assert response["parameters"]["profile"] == 1
        assert response["parameters"]["profile_name"] == "prefill"
    logits = results[True]
    assert logits.shape == (1, 512) and logits.dtype == np.float32
    np.testing.assert_array_equal(logits, results[False])
    first = reference_tokens(trt_edge_run, bundle, PROMPT, 1)[0]
    assert int(np.argmax(logits[0])) == first


def test_a_pinned_profile_and_auto(client: triton.InferenceServerClient, name: str) -> None:
    pinned = client.infer(name, prompt_inputs([5], True), parameters={"profile": 0})
    assert pinned.get_response()["parameters"]["profile"] == 0
    auto = client.infer(name, prompt_inputs(PROMPT, True), parameters={"auto": True})
    assert auto.get_response()["parameters"]["profile"] == 1


@pytest.mark.parametrize(
    ("ids", "parameters", "named"),
    [
        (PROMPT, {"phase": "decode"}, "input_ids"),  # 8 tokens under decode's seq 1
        (PROMPT, {}, "parameters.phase"),
        (PROMPT, {"phase": "warp"}, "parameters.phase"),
    ],
)
def test_what_the_bundle_cannot_serve_is_a_400_naming_it(
    client: triton.InferenceServerClient,
    name: str,
    ids: list[int],
    parameters: dict[str, Any],
    named: str,
) -> None:
    with pytest.raises(InferenceServerException) as caught:
        client.infer(name, prompt_inputs(ids, True), parameters=parameters)
    assert caught.value.status() == "400"
    assert named in str(caught.value.message())


def test_malformed_infer_bodies_are_400s(served: Served, name: str) -> None:
    url = f"{served.url}/v2/models/{name}/infer"
    bad = [
        (b"{oops", "body"),
        (json.dumps({"inputs": [], "parameters": {"phase": "decode"}}).encode(), "inputs"),
        (json.dumps({"inputs": [{"name": "x"}], "parameters": {"phase": "decode"}}).encode(),
         "inputs[0].name"),
        (json.dumps({"inputs": [{"name": "input_ids", "datatype": "FP32", "shape": [1, 1],
                                 "data": [1.0]}], "parameters": {"phase": "decode"}}).encode(),
         "datatype"),
    ]  # fmt: skip
    for raw, field in bad:
        response = httpx.post(url, content=raw, timeout=30)
        assert response.status_code == 400, response.text
        assert field in response.json()["error"]
    missing = httpx.get(f"{served.url}/v2/models/other", timeout=30)
    assert missing.status_code == 404
