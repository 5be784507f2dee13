"""The OpenAI-compatible API, driven by the official `openai` client and by `httpx`, over the
real engine on the mini Gemma-3 bundle: greedy text equals `trt-edge-run --generate`'s,
streamed equals unstreamed, a seeded sampled completion repeats, stop strings cut, bad
parameters are 400s naming the field, and a client that goes away is counted cancelled."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from openai.types.chat import ChatCompletionMessageParam
from trt_edge_runner.serve.metrics import OUTCOMES

from tests.helpers.waits import wait_until
from tests.serve.conftest import Served, bundle_doc, metric

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("llm-gemma3")]

PROMPT = "The cache is a buffer"
MAX_TOKENS = 12


@pytest.fixture(scope="module")
def client(served: Served) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{served.url}/v1", api_key="unused", max_retries=0)


def tokenizer(bundle: Path) -> Any:
    from tokenizers import Tokenizer

    return Tokenizer.from_file(str(bundle / "tokenizer.json"))


def reference_tokens(runner: Path, bundle: Path, prompt: list[int], new_tokens: int) -> list[int]:
    """What the one-shot C++ runner generates greedily for `prompt`."""
    argv = [str(runner), "--bundle", str(bundle), "--generate", "--json"]
    argv += ["--prompt-ids", ",".join(map(str, prompt)), "--max-new-tokens", str(new_tokens)]
    done = subprocess.run(argv, capture_output=True, text=True, check=True, timeout=300)
    tokens: list[int] = json.loads(done.stdout)["tokens"]
    return tokens


def test_models_lists_the_bundle(client: openai.OpenAI, bundle: Path) -> None:
    names = [m.id for m in client.models.list()]
    assert names == [bundle_doc(bundle)["model"]["name"]]


def test_greedy_text_equals_the_runners_generate(
    client: openai.OpenAI, bundle: Path, trt_edge_run: Path
) -> None:
    tok = tokenizer(bundle)
    prompt_ids = tok.encode(PROMPT).ids
    expected = reference_tokens(trt_edge_run, bundle, prompt_ids, MAX_TOKENS)
    name = bundle_doc(bundle)["model"]["name"]
    done = client.completions.create(
        model=name, prompt=PROMPT, max_tokens=MAX_TOKENS, temperature=0
    )
    choice = done.choices[0]
    assert choice.text == tok.decode(expected, skip_special_tokens=True)
    assert done.usage is not None
    assert done.usage.prompt_tokens == len(prompt_ids)
    assert done.usage.completion_tokens == len(expected)
    eos = set(bundle_doc(bundle)["llm"]["eos_token_ids"])
    assert choice.finish_reason == ("stop" if expected[-1] in eos else "length")


def test_streamed_text_equals_the_whole_answer(client: openai.OpenAI, bundle: Path) -> None:
    name = bundle_doc(bundle)["model"]["name"]
    whole = client.completions.create(
        model=name, prompt=PROMPT, max_tokens=MAX_TOKENS, temperature=0
    )
    chunks = list(
        client.completions.create(
            model=name,
            prompt=PROMPT,
            max_tokens=MAX_TOKENS,
            temperature=0,
            stream=True,
            stream_options={"include_usage": True},
        )
    )
    text = "".join(c.choices[0].text for c in chunks if c.choices)
    assert text == whole.choices[0].text
    finishes = [c.choices[0].finish_reason for c in chunks if c.choices]
    assert finishes[-1] == whole.choices[0].finish_reason
    assert all(f is None for f in finishes[:-1])
    assert chunks[-1].usage is not None
    assert chunks[-1].usage.completion_tokens == whole.usage.completion_tokens  # type: ignore[union-attr]


def test_chat_greedy_equals_the_runner_on_the_rendered_template(
    client: openai.OpenAI, bundle: Path, trt_edge_run: Path
) -> None:
    from trt_edge_runner.text import BundleText

    messages: list[ChatCompletionMessageParam] = [{"role": "user", "content": "What is a cache?"}]
    text = BundleText.from_bundle(bundle)
    expected = reference_tokens(trt_edge_run, bundle, text.encode_chat(messages), MAX_TOKENS)
    name = bundle_doc(bundle)["model"]["name"]
    done = client.chat.completions.create(
        model=name,
        messages=messages,
        max_tokens=MAX_TOKENS,
        temperature=0,
    )
    assert done.choices[0].message.role == "assistant"
    assert done.choices[0].message.content == text.decode(expected)
    assert done.usage is not None and done.usage.completion_tokens == len(expected)
    chunks = list(
        client.chat.completions.create(
            model=name,
            messages=messages,
            max_tokens=MAX_TOKENS,
            temperature=0,
            stream=True,
        )
    )
    assert chunks[0].choices[0].delta.role == "assistant"
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == text.decode(expected)
    assert chunks[-1].choices[0].finish_reason == done.choices[0].finish_reason


def test_a_conversation_the_template_refuses_is_a_400_on_messages(
    client: openai.OpenAI, bundle: Path
) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(
            model=bundle_doc(bundle)["model"]["name"],
            messages=[{"role": "assistant", "content": "a"}, {"role": "assistant", "content": "b"}],
        )
    assert isinstance(caught.value.body, dict) and caught.value.body["param"] == "messages"


def test_a_seeded_sampled_completion_is_reproducible(client: openai.OpenAI, bundle: Path) -> None:
    name = bundle_doc(bundle)["model"]["name"]

    def sample(seed: int) -> str:
        done = client.completions.create(
            model=name, prompt=PROMPT, max_tokens=MAX_TOKENS, temperature=1.5, top_p=0.95,
            seed=seed, extra_body={"ignore_eos": True},
        )  # fmt: skip
        return done.choices[0].text

    first = sample(1234)
    assert sample(1234) == first
    assert len({sample(s) for s in (1, 2, 3, 4)} | {first}) > 1  # sampling does sample


def test_a_stop_string_ends_the_text_before_it(client: openai.OpenAI, bundle: Path) -> None:
    name = bundle_doc(bundle)["model"]["name"]
    greedy = client.completions.create(
        model=name, prompt=PROMPT, max_tokens=MAX_TOKENS, temperature=0,
        extra_body={"ignore_eos": True},
    ).choices[0].text  # fmt: skip
    stop = greedy[len(greedy) // 2 : len(greedy) // 2 + 2]
    assert stop.strip(), greedy  # the mini's text has something to stop at
    for stream in (False, True):
        if stream:
            chunks = client.completions.create(
                model=name, prompt=PROMPT, max_tokens=MAX_TOKENS, temperature=0, stop=[stop],
                stream=True, extra_body={"ignore_eos": True},
            )  # fmt: skip
            text = "".join(c.choices[0].text for c in chunks if c.choices)
        else:
            done = client.completions.create(
                model=name, prompt=PROMPT, max_tokens=MAX_TOKENS, temperature=0, stop=stop,
                extra_body={"ignore_eos": True},
            )  # fmt: skip
            text = done.choices[0].text
            assert done.choices[0].finish_reason == "stop"
        assert text == greedy[: greedy.index(stop)]


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        ({"temperature": 3}, "temperature"),
        ({"top_p": 2}, "top_p"),
        ({"max_tokens": 0}, "max_tokens"),
        ({"n": 3}, "n"),
        ({"stop": ["a", "b", "c", "d", "e"]}, "stop"),
    ],
)
def test_bad_parameters_are_400s_naming_the_field(
    client: openai.OpenAI, bundle: Path, extra: dict[str, Any], field: str
) -> None:
    body = {"model": bundle_doc(bundle)["model"]["name"], "prompt": PROMPT, **extra}
    with pytest.raises(openai.BadRequestError) as caught:
        client.completions.create(**body)
    assert caught.value.status_code == 400
    assert isinstance(caught.value.body, dict)
    assert caught.value.body["param"] == field
    assert field in caught.value.body["message"]


def test_malformed_bodies_are_400s_not_tracebacks(served: Served) -> None:
    for raw in (b"{not json", b"[]", b'{"prompt": 5}', b'{"prompt": [999999]}'):
        response = httpx.post(f"{served.url}/v1/completions", content=raw, timeout=30)
        assert response.status_code == 400, response.text
        error = response.json()["error"]
        assert error["param"] in ("body", "prompt")
        assert "Traceback" not in response.text
    unknown = httpx.post(
        f"{served.url}/v1/completions", json={"model": "nope", "prompt": "x"}, timeout=30
    )
    assert unknown.status_code == 404 and unknown.json()["error"]["param"] == "model"


def test_an_id_past_the_vocabulary_is_the_engines_400_naming_prompt(
    client: openai.OpenAI, bundle: Path
) -> None:
    """The engine owns the vocabulary limit: its refusal reaches the client in the API's
    terms (`prompt`, not the engine's `prompt_ids`), streamed or not, naming the id."""
    vocab = bundle_doc(bundle)["llm"]["vocab_size"]
    for stream in (False, True):
        with pytest.raises(openai.BadRequestError) as caught:
            client.completions.create(
                model=bundle_doc(bundle)["model"]["name"], prompt=[1, vocab + 3], stream=stream
            )
        assert isinstance(caught.value.body, dict), caught.value
        assert caught.value.body["param"] == "prompt"
        assert str(vocab + 3) in caught.value.body["message"]


def test_a_client_that_goes_away_is_counted_cancelled(served: Served, bundle: Path) -> None:
    before = httpx.get(f"{served.url}/metrics").text
    body = {
        "model": bundle_doc(bundle)["model"]["name"], "prompt": PROMPT, "max_tokens": 40,
        "temperature": 0, "stream": True, "ignore_eos": True,
    }  # fmt: skip
    with (
        httpx.Client(timeout=30) as http,
        http.stream("POST", f"{served.url}/v1/completions", json=body) as response,
    ):
        assert response.status_code == 200
        next(response.iter_lines())  # the first token arrived; now hang up
    labels = {"endpoint": "/v1/completions", "model": body["model"]}

    def ended(after: str, outcomes: tuple[str, ...] = OUTCOMES) -> float:
        return sum(
            metric(after, "trt_edge_requests_total", **labels, outcome=o)
            - metric(before, "trt_edge_requests_total", **labels, outcome=o)
            for o in outcomes
        )

    after = wait_until(
        lambda: httpx.get(f"{served.url}/metrics").text,
        "the hung-up request counted",
        until=lambda text: ended(text) > 0,
    )
    done = ended(after, ("ok", "cancelled"))
    # The mini may finish 40 tokens before the hang-up reaches the service: ok or cancelled,
    # never an error; and the service goes on serving.
    assert done == 1
    for outcome in ("engine_error", "deadline"):
        labels = {"endpoint": "/v1/completions", "outcome": outcome, "model": body["model"]}
        assert metric(after, "trt_edge_requests_total", **labels) == metric(
            before, "trt_edge_requests_total", **labels
        )
    follow = httpx.post(
        f"{served.url}/v1/completions", json={**body, "stream": False, "max_tokens": 2}, timeout=30
    )
    assert follow.status_code == 200


def test_metrics_carry_the_names_the_fleet_gate_reads(served: Served, bundle: Path) -> None:
    """After one completion of its own: the module's service may be a fresh one (pytest sets
    a module fixture up again when xdist interleaves another module's tests), and a labelled
    histogram shows no `_bucket` line before its first observation."""
    body = {"model": bundle_doc(bundle)["model"]["name"], "prompt": PROMPT, "max_tokens": 3}
    done = httpx.post(f"{served.url}/v1/completions", json=body, timeout=120)
    assert done.status_code == 200, done.text
    text = httpx.get(f"{served.url}/metrics").text
    for name in (
        "trt_edge_requests_total",
        "trt_edge_time_to_first_token_seconds_bucket",
        "trt_edge_time_per_output_token_seconds_bucket",
        "trt_edge_execute_seconds_bucket",
        "trt_edge_tokens_total",
        "trt_edge_queue_depth",
        "trt_edge_profile_switches_total",
        "trt_edge_runner_restarts_total",
        "trt_edge_bundle_info",
    ):
        assert name in text, name
    model = body["model"]  # every series of a model's work carries its name
    assert metric(text, "trt_edge_execute_seconds_count", model=model, phase="prefill",
                  profile="1") > 0  # fmt: skip
    assert metric(text, "trt_edge_execute_seconds_count", model=model, phase="decode",
                  profile="0") > 0  # fmt: skip
    assert metric(text, "trt_edge_tokens_total", model=model, direction="out") > 0
    assert metric(text, "trt_edge_profile_switches_total", model=model) > 0
    assert metric(text, "trt_edge_model_resident", model=model) == 1
