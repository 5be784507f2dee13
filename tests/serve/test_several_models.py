"""Several models in one service: `--bundle` twice serves the mini Gemma-3 and the mini Qwen3,
each by its bundle's name, over the real engine and the official `openai` client. Each
answers as it does served alone; under a memory budget that holds one model at a time,
asking for the other unloads the least recently used and the first is loaded again on
demand (seen in `/v1/models` and `/metrics`); concurrent requests for an unloaded model
share one load; a wrong or missing `model` is a 404 or 400 naming the field; a bundle that
does not load is a 503 naming it, and so is one that would need a busy model unloaded; a
budget smaller than a model and two bundles of one name
refuse to start."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import openai
import pytest

from tests.helpers.waits import wait_until
from tests.serve.conftest import Served, bundle_doc, metric, unread_input

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("llm-gemma3")]

PROMPT = "The cache is a buffer"
MAX_TOKENS = 10
# Each mini records ~17 MiB (bundle.json memory.total_bytes): 20 MiB holds one, not both.
ONE_AT_A_TIME_MIB = "20"


def client_of(served: Served) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{served.url}/v1", api_key="unused", max_retries=0)


def name_of(bundle: Path) -> str:
    name: str = bundle_doc(bundle)["model"]["name"]
    return name


def greedy(client: openai.OpenAI, model: str) -> tuple[str, int]:
    """The greedy text of PROMPT and how many tokens it took."""
    done = client.completions.create(
        model=model, prompt=PROMPT, max_tokens=MAX_TOKENS, temperature=0,
        extra_body={"ignore_eos": True},
    )  # fmt: skip
    assert done.model == model and done.usage is not None
    return done.choices[0].text, done.usage.completion_tokens


def loaded(client: openai.OpenAI) -> dict[str, bool]:
    """`/v1/models`: each model listed and whether it is loaded (the extra field)."""
    return {m.id: bool((m.model_extra or {})["loaded"]) for m in client.models.list()}


@pytest.fixture(scope="module")
def bundles(mini_bundle: Callable[[str], Path]) -> tuple[Path, Path]:
    return mini_bundle("gemma3"), mini_bundle("qwen3")


@pytest.fixture(scope="module")
def alone(
    serve_bundle: Callable[..., Served], bundles: tuple[Path, Path]
) -> dict[str, tuple[str, int]]:
    """Each bundle's greedy answer when it is served alone."""
    answers = {}
    for bundle in bundles:
        served = serve_bundle(bundle)
        answers[name_of(bundle)] = greedy(client_of(served), name_of(bundle))
        served.stop()
    return answers


@pytest.fixture(scope="module")
def several(serve_bundle: Callable[..., Served], bundles: tuple[Path, Path]) -> Served:
    first, second = bundles
    return serve_bundle(first, "--bundle", second, "--memory-budget-mib", ONE_AT_A_TIME_MIB)


def test_lru_model_unloaded_under_a_small_budget_and_loaded_again_on_demand(
    several: Served, bundles: tuple[Path, Path], alone: dict[str, tuple[str, int]]
) -> None:
    client = client_of(several)
    gemma, qwen = (name_of(b) for b in bundles)
    assert loaded(client) == {gemma: True, qwen: False}  # the first is loaded at start
    assert greedy(client, gemma) == alone[gemma]

    assert greedy(client, qwen) == alone[qwen]  # loads qwen: gemma does not fit beside it
    assert loaded(client) == {gemma: False, qwen: True}
    text = httpx.get(f"{several.url}/metrics", timeout=10).text
    assert metric(text, "trt_edge_model_unloads_total", model=gemma) == 1
    assert metric(text, "trt_edge_model_loads_total", model=qwen) == 1
    assert metric(text, "trt_edge_model_resident", model=gemma) == 0
    assert len(several.engines()) == 1

    # Three requests at once for the unloaded gemma: one load, three equal answers.
    with ThreadPoolExecutor(3) as pool:
        answers = list(pool.map(lambda _: greedy(client_of(several), gemma), range(3)))
    assert answers == [alone[gemma]] * 3
    assert loaded(client) == {gemma: True, qwen: False}
    text = httpx.get(f"{several.url}/metrics", timeout=10).text
    assert metric(text, "trt_edge_model_loads_total", model=gemma) == 2
    assert metric(text, "trt_edge_model_unloads_total", model=qwen) == 1
    assert metric(text, "trt_edge_requests_total", model=qwen, endpoint="/v1/completions",
                  outcome="ok") == 1  # fmt: skip
    assert metric(text, "trt_edge_tokens_total", model=gemma, direction="out") == 4 * MAX_TOKENS
    assert len(several.engines()) == 1


def test_a_model_in_flight_is_not_unloaded_the_other_gets_a_503_naming_it(
    several: Served, bundles: tuple[Path, Path], alone: dict[str, tuple[str, int]]
) -> None:
    client = client_of(several)
    gemma, qwen = (name_of(b) for b in bundles)
    greedy(client, gemma)  # gemma loaded (whatever ran before), qwen not
    engine = several.engine()
    body = {"model": gemma, "prompt": PROMPT, "max_tokens": MAX_TOKENS, "temperature": 0}
    os.kill(engine, signal.SIGSTOP)  # holds gemma's request in its engine: in flight
    try:
        with ThreadPoolExecutor(1) as pool:
            pending = pool.submit(
                httpx.post, f"{several.url}/v1/completions", json=body, timeout=60
            )
            wait_until(lambda: unread_input(engine), "gemma's request written to its engine")
            with pytest.raises(openai.APIStatusError) as refused:
                greedy(client, qwen)
            os.kill(engine, signal.SIGCONT)
            assert pending.result().status_code == 200
    finally:
        os.kill(engine, signal.SIGCONT)
    assert refused.value.status_code == 503
    assert refused.value.response.headers["retry-after"] == "1"
    assert gemma in refused.value.message and "in flight" in refused.value.message
    assert loaded(client) == {gemma: True, qwen: False}
    assert greedy(client, qwen) == alone[qwen]  # gemma idle again: unloaded for qwen


def test_kserve_addresses_each_model_by_name_without_loading_it(
    several: Served, bundles: tuple[Path, Path]
) -> None:
    for bundle in bundles:
        meta = httpx.get(f"{several.url}/v2/models/{name_of(bundle)}", timeout=10)
        assert meta.status_code == 200 and meta.json()["name"] == name_of(bundle)
    ready = {
        name_of(b): httpx.get(f"{several.url}/v2/models/{name_of(b)}/ready", timeout=10).json()
        for b in bundles
    }
    assert sorted(r["ready"] for r in ready.values()) == [False, True]  # one is loaded
    assert httpx.get(f"{several.url}/v2/models/nope", timeout=10).status_code == 404
    assert httpx.get(f"{several.url}/v2/health/ready", timeout=10).status_code == 200


def test_a_wrong_model_is_a_404_and_a_missing_one_a_400_naming_the_field(
    several: Served, bundles: tuple[Path, Path]
) -> None:
    client = client_of(several)
    with pytest.raises(openai.NotFoundError) as unknown:
        greedy(client, "nope")
    assert unknown.value.body["param"] == "model"  # type: ignore[index]
    with pytest.raises(openai.BadRequestError) as missing:
        greedy(client, "")  # the client needs the argument: "" is sent as no model
    assert missing.value.body["param"] == "model"  # type: ignore[index]
    assert all(name_of(b) in missing.value.message for b in bundles)
    body = httpx.post(f"{several.url}/v1/completions", json={"prompt": "x"}, timeout=30)
    assert body.status_code == 400 and body.json()["error"]["param"] == "model"


def test_a_bundle_that_does_not_load_is_a_503_naming_it(
    serve_bundle: Callable[..., Served], bundles: tuple[Path, Path], tmp_path: Path
) -> None:
    gemma, qwen = bundles
    broken = tmp_path / qwen.name
    shutil.copytree(qwen, broken)
    program = next(broken.glob("*.pte"))
    data = program.read_bytes()
    program.write_bytes(data[:-1] + bytes([data[-1] ^ 0xFF]))  # its sha256 no longer matches
    served = serve_bundle(gemma, "--bundle", broken)
    try:
        with pytest.raises(openai.InternalServerError) as refused:
            greedy(client_of(served), name_of(qwen))
        assert refused.value.status_code == 503
        assert name_of(qwen) in refused.value.message and "did not load" in refused.value.message
        assert greedy(client_of(served), name_of(gemma))[1] == MAX_TOKENS  # still serving
    finally:
        served.stop()


def refused_start(runner: Path, *args: str | Path) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "trt_edge_runner.device_cli", "serve", "--runner", str(runner)]
    done = subprocess.run(
        [*argv, *map(str, args)], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    return done


def test_two_bundles_of_one_name_and_a_budget_below_a_model_refuse_to_start(
    trt_edge_run: Path, bundles: tuple[Path, Path], tmp_path: Path
) -> None:
    gemma, qwen = bundles
    twin = tmp_path / "twin"
    shutil.copytree(gemma, twin)
    done = refused_start(trt_edge_run, "--bundle", gemma, "--bundle", twin)
    assert str(gemma) in done.stderr and str(twin) in done.stderr
    assert name_of(gemma) in done.stderr
    done = refused_start(trt_edge_run, "--bundle", gemma, "--bundle", qwen,
                         "--memory-budget-mib", "8")  # fmt: skip
    assert name_of(gemma) in done.stderr and "8.0 MiB" in done.stderr
