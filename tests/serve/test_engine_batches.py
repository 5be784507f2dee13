"""The service's engine client hands a slow caller the tokens that piled up in one batch: the
real engine on the mini Gemma-3 bundle streams a generation while the caller does not read;
the next batch then holds every remaining token event in order and the terminal `done`, and
the tokens equal the unstreamed run's."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest
from trt_edge_runner.serve.engine_client import EngineProcess
from trt_edge_runner.serve.engine_events import Done, GenerateDone, Token

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("llm-gemma3")]

PROMPT = [2, 40, 41, 42, 43, 44, 45, 46, 47, 48]
NEW = 12


def test_a_slow_caller_gets_the_backlog_in_one_batch(
    trt_edge_run: Path, mini_bundle: Callable[[str], Path]
) -> None:
    body = {"prompt_ids": PROMPT, "max_new_tokens": NEW, "ignore_eos": True}

    async def scenario() -> tuple[list[list[Token | Done]], Done]:
        engine = await EngineProcess.start(trt_edge_run, mini_bundle("gemma3"))
        try:
            batches = engine.batches("generate", {**body, "stream": True})
            seen = [await batches.__anext__()]  # the request is sent: its first token
            # The engine runs requests in order: once a later one is answered, every event of
            # the streamed one has arrived, unread.
            quiet = await engine.call("generate", {**body, "reuse_prefix": False})
            seen.extend([batch async for batch in batches])
            return seen, quiet
        finally:
            await engine.stop()

    seen, quiet = asyncio.run(scenario())
    # The first batch: what had arrived when the caller first asked (the first token, or
    # more on a loaded machine); the second: everything left, up to `done`.
    assert len(seen) <= 2 and sum(len(batch) for batch in seen) == NEW + 1
    events = [event for batch in seen for event in batch]
    tokens = [event for event in events if isinstance(event, Token)]
    assert [event.index for event in tokens] == list(range(NEW))
    done = events[-1]
    assert isinstance(done, GenerateDone) and isinstance(quiet, GenerateDone)
    assert tuple(event.token for event in tokens) == done.tokens == quiet.tokens
