"""`trt-edge-run --serve` constrained generation (docs/engine-protocol.md, `mask`): the engine
waits before each token for the client's mask and samples only an id it allows — here one id
per token, so the tokens are exactly the ones the masks name, greedy or sampled; a mask for
the wrong index, of the wrong size or allowing nothing fails the generation naming the field;
`constrained` without `stream` is refused; a cancel reaches a generation waiting for a mask."""

from __future__ import annotations

import base64
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.engine_client import Engine, terminal

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("llm-gemma3")]

PROMPT = [2, 40, 41, 42]
WANTED = [7, 300, 11, 511]


def only(vocab: int, *ids: int) -> str:
    """The mask allowing exactly `ids`: little-endian uint32 words, bit k%32 of word k//32."""
    words = bytearray(4 * ((vocab + 31) // 32))
    for k in ids:
        words[k // 8] |= 1 << (k % 8)
    return base64.b64encode(bytes(words)).decode()


def mask(target: str, index: int, allowed: str) -> dict[str, Any]:
    return {"id": f"m{index}", "op": "mask", "target": target, "index": index, "allowed": allowed}


def constrained(rid: str, new: int, **sampling: Any) -> dict[str, Any]:
    request = {"id": rid, "op": "generate", "prompt_ids": PROMPT, "max_new_tokens": new}
    return {
        **request,
        "stream": True,
        "constrained": True,
        "ignore_eos": True,
        "sampling": sampling,
    }


def test_the_engine_samples_only_what_each_mask_allows(
    trt_edge_run: Path, mini_bundle: Callable[[str], Path]
) -> None:
    with Engine(trt_edge_run, mini_bundle("gemma3")) as engine:
        vocab = engine.event()["generation"]["vocab_size"]
        for rid, sampling in (("g", {}), ("s", {"temperature": 1.5, "seed": 3})):
            engine.send(constrained(rid, len(WANTED), **sampling), mask(rid, 0, only(vocab, 7)))
            tokens = []
            while True:
                event = engine.event()
                if event.get("id", "").startswith("m"):
                    assert event["event"] == "done", event  # a mask is answered at once
                    continue
                assert event["id"] == rid and event["event"] in ("token", "done"), event
                if event["event"] == "done":
                    break
                tokens.append(event["token"])
                if event["index"] + 1 < len(WANTED):
                    engine.send(
                        mask(rid, event["index"] + 1, only(vocab, WANTED[event["index"] + 1]))
                    )
            assert tokens == WANTED == event["tokens"]


@pytest.mark.parametrize(
    ("bad", "field"),
    [
        (lambda vocab: mask("b", 1, only(vocab, 7)), "mask.index"),
        (lambda vocab: mask("b", 0, only(vocab + 64, 7)), "mask.allowed"),
        (lambda vocab: mask("b", 0, only(vocab)), "mask.allowed"),
    ],
)
def test_a_bad_mask_fails_the_generation_naming_the_field(
    trt_edge_run: Path,
    mini_bundle: Callable[[str], Path],
    bad: Callable[[int], dict[str, Any]],
    field: str,
) -> None:
    with Engine(trt_edge_run, mini_bundle("gemma3")) as engine:
        vocab = engine.event()["generation"]["vocab_size"]
        engine.send(constrained("b", 4), bad(vocab))
        error = terminal(engine.until_terminal("b"))
        assert error["event"] == "error" and error["error"]["field"] == field, error
        # The engine goes on serving.
        engine.send(constrained("c", 1), mask("c", 0, only(vocab, 9)))
        assert terminal(engine.until_terminal("c"))["tokens"] == [9]


def test_constrained_needs_stream_and_a_cancel_reaches_a_waiting_generation(
    trt_edge_run: Path, mini_bundle: Callable[[str], Path]
) -> None:
    with Engine(trt_edge_run, mini_bundle("gemma3")) as engine:
        vocab = engine.event()["generation"]["vocab_size"]
        refused = terminal(engine.request({**constrained("n", 2), "stream": False}))
        assert refused["error"]["field"] == "constrained"
        engine.send(constrained("w", 4), mask("w", 0, only(vocab, 5)))
        event = engine.event()
        while event.get("id") != "w":  # the mask's own done comes first or after
            event = engine.event()
        assert event["event"] == "token"  # token 0 made: now it waits for mask 1
        engine.send({"id": "c", "op": "cancel", "target": "w"})
        done = terminal(engine.until_terminal("w"))
        assert done["event"] == "done" and done["stop"] == "cancelled" and done["tokens"] == [5]
