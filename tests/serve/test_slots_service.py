"""A `runtime.slots` bundle served (issue 29): the official `openai` client's concurrent
streaming greedy requests run at once in the engine's slots (continuous batching), and each
stream's text is the one the same request gets alone — completions and chat, on the four mini
architectures, and on the Qwen3 mini with 8da4w linear layers (their slots bundles are built
once per session for tests/llm/test_slots.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import openai
import pytest

from tests.llm.conftest import slots_bundle
from tests.llm.llm_folders import ARCHITECTURES, LINEAR_8DA4W, SLOTS
from tests.serve.conftest import Served, bundle_doc

__all__ = ["slots_bundle"]  # the fixture, defined in tests/llm/conftest.py

pytestmark = pytest.mark.slow

MAX_TOKENS = 10
PROMPTS = ("one two three", "the cat sat", "blue")
MESSAGES = ("hello there", "what is it")


async def stream(client: openai.AsyncOpenAI, name: str, kind: str, text: str) -> list[Any]:
    """One streamed greedy request: its text deltas and its finish reason, in order."""
    if kind == "chat":
        chunks = await client.chat.completions.create(
            model=name, messages=[{"role": "user", "content": text}], max_tokens=MAX_TOKENS,
            temperature=0, stream=True,
        )  # fmt: skip
        return [(c.choices[0].delta.content, c.choices[0].finish_reason) async for c in chunks]
    done = await client.completions.create(
        model=name, prompt=text, max_tokens=MAX_TOKENS, temperature=0, stream=True
    )
    return [(c.choices[0].text, c.choices[0].finish_reason) async for c in done]


def requests_for(bundle: Path) -> list[tuple[str, str]]:
    """SLOTS requests: completions, and chat where the mini has a chat template."""
    chat = bundle_doc(bundle)["llm"].get("chat_template") is not None
    asks = [("completion", p) for p in PROMPTS] + [("chat", m) for m in MESSAGES if chat]
    return (asks + [("completion", "a b c d e")] * SLOTS)[:SLOTS]


@pytest.mark.parametrize(
    ("arch", "quantize"),
    [
        *(pytest.param(a, None, marks=pytest.mark.xdist_group(f"llm-{a}")) for a in ARCHITECTURES),
        pytest.param(
            "qwen3", LINEAR_8DA4W, marks=pytest.mark.xdist_group("llm-qwen3"), id="qwen3-8da4w"
        ),
    ],
)
def test_concurrent_streams_equal_each_request_alone(
    arch: str,
    quantize: str | None,
    slots_bundle: Callable[..., Path],
    serve_bundle: Callable[..., Served],
) -> None:
    bundle = slots_bundle(arch, quantize)
    served = serve_bundle(bundle)
    name = bundle_doc(bundle)["model"]["name"]
    asks = requests_for(bundle)

    async def scenario() -> tuple[list[list[Any]], list[list[Any]]]:
        client = openai.AsyncOpenAI(base_url=f"{served.url}/v1", api_key="unused", max_retries=0)
        together = await asyncio.gather(*(stream(client, name, k, t) for k, t in asks))
        alone = [await stream(client, name, k, t) for k, t in asks]
        await client.close()
        return list(together), alone

    together, alone = asyncio.run(scenario())
    for ask, batched, solo in zip(asks, together, alone, strict=True):
        assert batched == solo, ask
        assert "".join(d or "" for d, _ in batched), ask  # some text was made
