"""`trt-edge-run` on a `runtime.slots` bundle (llm version 3, issue 29): `--generate` runs one
conversation in slot 0 and makes the Python runner's tokens; `--serve` runs up to N requests at
once (continuous batching), each stream's tokens those of the same request alone: a long prompt
admitted while another stream decodes is prefilled a chunk per turn between that stream's
decode steps, a cancel frees one slot without disturbing the others, and a follow-up turn goes
to the slot holding its conversation and prefills only the rest (the tokens of a cold run).
Asserted on the engine protocol's events and their order, never on time."""

from __future__ import annotations

import base64
import struct
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from trt_edge.llm.generation import greedy_generate
from trt_edge_runner.bundle_format import BundleManifest
from trt_edge_runner.runner import Runner
from trt_edge_runner.tensors import random_inputs

from tests.helpers.engine_client import Engine, cli_tokens, terminal
from tests.llm.llm_folders import MAX_CACHE_LEN, PREFILL_MAX, SLOTS

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("llm-qwen3")]

PROMPTS = ([5, 17, 99, 3, 250], [7] * 9, list(range(40, 53)), [300, 301, 302])


def request(rid: str, prompt: list[int], new: int, **fields: Any) -> dict[str, Any]:
    return {"id": rid, "op": "generate", "prompt_ids": prompt, "max_new_tokens": new,
            "ignore_eos": True, "stream": True, **fields}  # fmt: skip


def solo(binary: Path, bundle: Path, body: dict[str, Any]) -> list[int]:
    """The tokens of `body` alone in a fresh engine."""
    with Engine(binary, bundle) as engine:
        engine.event()
        done = terminal(engine.request(body))
    assert done["event"] == "done", done
    tokens: list[int] = done["tokens"]
    return tokens


def collect(engine: Engine, ids: set[str]) -> list[dict[str, Any]]:
    """Every event up to the terminal events of all of `ids`, in the order they came."""
    events, open_ids = [], set(ids)
    while open_ids:
        event = engine.event()
        events.append(event)
        if event.get("id") in open_ids and event["event"] in ("done", "error"):
            open_ids.discard(event["id"])
    return events


def done_of(events: list[dict[str, Any]], rid: str) -> dict[str, Any]:
    (done,) = [e for e in events if e.get("id") == rid and e["event"] in ("done", "error")]
    assert done["event"] == "done", done
    return done


def test_generate_on_a_slots_bundle_equals_the_python_runner(
    trt_edge_run: Path, slots_bundle: Callable[..., Path]
) -> None:
    bundle = slots_bundle("qwen3")
    for prompt in (PROMPTS[0], list(range(60, 60 + PREFILL_MAX + 5))):
        want = greedy_generate(Runner.open(bundle), prompt, 8).tokens
        assert cli_tokens(trt_edge_run, bundle, prompt, 8) == list(want)


def test_made_up_inputs_name_distinct_slots_in_both_runners(
    trt_edge_run: Path, slots_bundle: Callable[..., Path]
) -> None:
    """A health run with made-up inputs (`run --phase decode` at the profile's opt batch 4):
    slot ids count 0..batch-1 like positions do, so the slot check passes in both runners."""
    bundle = slots_bundle("qwen3")
    done = subprocess.run(
        [str(trt_edge_run), "run", "--bundle", str(bundle), "--phase", "decode", "--json"],
        capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    manifest = BundleManifest.from_json((bundle / "bundle.json").read_bytes(), "bundle.json")
    arrays = random_inputs(manifest, {"batch": SLOTS, "seq": 1}, seed=3)
    assert arrays[2].tolist() == list(range(SLOTS))
    assert Runner.open(bundle).run("decode", arrays).outputs[0].shape == (SLOTS, 512)


def test_a_batch_of_streams_equals_each_alone_and_is_decoded_together(
    trt_edge_run: Path, slots_bundle: Callable[..., Path]
) -> None:
    """SLOTS streams sent together run at once; a request beyond them waits for a free slot."""
    bundle = slots_bundle("qwen3")
    bodies = [request(f"q{k}", prompt, 12) for k, prompt in enumerate(PROMPTS)]
    extra = request("q4", [11, 12, 13], 4, stream=False)  # one more than the slots: it waits
    with Engine(trt_edge_run, bundle) as engine:
        ready = engine.event()
        assert ready["generation"]["slots"] == SLOTS
        engine.send(*bodies, extra)
        events = collect(engine, {b["id"] for b in [*bodies, extra]})
    first_done = next(i for i, e in enumerate(events) if e["event"] == "done")
    (extra_at,) = [i for i, e in enumerate(events) if e["id"] == "q4"]
    assert extra_at > first_done  # it ran once a slot was free
    assert events[extra_at]["tokens"] == solo(trt_edge_run, bundle, extra)
    for body in bodies:
        done = done_of(events, body["id"])
        streamed = [e["token"] for e in events if e["id"] == body["id"] and e["event"] == "token"]
        assert streamed == done["tokens"] == solo(trt_edge_run, bundle, body)
    # Decoded together: some decode step of the last request ran with the others (the token
    # events of all four interleave instead of one stream finishing before the next starts).
    firsts = [next(i for i, e in enumerate(events) if e["id"] == b["id"]) for b in bodies]
    lasts = [max(i for i, e in enumerate(events) if e["id"] == b["id"]) for b in bodies]
    assert max(firsts) < min(lasts)


def test_a_long_prompt_is_prefilled_between_the_decode_steps_of_a_stream(
    trt_edge_run: Path, slots_bundle: Callable[..., Path]
) -> None:
    """A (a 2-token prompt) and B (a prompt of two prefill calls) arrive together. Each turn
    runs one prompt chunk, then a decode step: turn 1 prefills A and decodes it, turn 2 runs
    B's first chunk and decodes A, turn 3 B's second chunk — so A's third token comes between
    B's chunks, before B's first token, and A goes on decoding beside B."""
    bundle = slots_bundle("qwen3")
    a = request("a", [3, 4], 40)
    b = request("b", [9 + k % 400 for k in range(MAX_CACHE_LEN - 4)], 3)
    with Engine(trt_edge_run, bundle) as engine:
        engine.event()
        engine.send(a, b)
        events = collect(engine, {"a", "b"})
    b_done = done_of(events, "b")
    assert [s["phase"] for s in b_done["steps"][:3]] == ["prefill", "prefill", "decode"]
    assert b_done["steps"][0]["seq"] + b_done["steps"][1]["seq"] == len(b["prompt_ids"])
    b_first = next(i for i, e in enumerate(events) if e["id"] == "b")
    assert events[b_first]["event"] == "token"
    a_before_b = [e for e in events[:b_first] if e["id"] == "a"]
    assert len(a_before_b) >= 3 and all(e["event"] == "token" for e in a_before_b)
    a_done_at = next(i for i, e in enumerate(events) if e["id"] == "a" and e["event"] == "done")
    assert a_done_at > b_first  # A was not finished first, nor B held back for it
    assert done_of(events, "a")["tokens"] == solo(trt_edge_run, bundle, a)
    assert b_done["tokens"] == solo(trt_edge_run, bundle, b)


def all_allowed(vocab: int, target: str, index: int) -> dict[str, Any]:
    """A `mask` allowing every id: the constrained stream's tokens are its unconstrained ones."""
    allowed = base64.b64encode(b"\xff" * 4 * ((vocab + 31) // 32)).decode()
    return {"id": f"m{index}", "op": "mask", "target": target, "index": index,
            "allowed": allowed}  # fmt: skip


def test_a_cancelled_stream_frees_its_slot_and_the_others_equal_solo(
    trt_edge_run: Path, slots_bundle: Callable[..., Path]
) -> None:
    """s1 is constrained and gets the mask of its first token only: it sits out the decode
    steps (waiting for its next mask) while s0 and s2 go on; cancelled, it ends, and its slot
    serves the next request."""
    bundle = slots_bundle("qwen3")
    bodies = [request(f"s{k}", prompt, 20) for k, prompt in enumerate(PROMPTS[:3])]
    bodies[1]["constrained"] = True
    with Engine(trt_edge_run, bundle) as engine:
        vocab = engine.event()["generation"]["vocab_size"]
        engine.send(*bodies, all_allowed(vocab, "s1", 0))
        events = collect(engine, {"s0", "s2"})  # they finish while s1 waits for its mask
        assert [e["event"] for e in events if e["id"] == "s1"] == ["token"]
        engine.send({"id": "c", "op": "cancel", "target": "s1"})
        events += collect(engine, {"s1", "c"})
        after = request("s3", PROMPTS[3], 5)
        again = terminal(engine.request(after))
    cancelled = done_of(events, "s1")
    assert cancelled["stop"] == "cancelled"
    unconstrained = solo(trt_edge_run, bundle, {**bodies[1], "constrained": False})
    assert cancelled["tokens"] == unconstrained[:1]
    for body in (bodies[0], bodies[2]):
        assert done_of(events, body["id"])["tokens"] == solo(trt_edge_run, bundle, body)
    assert again["event"] == "done" and again["tokens"] == solo(trt_edge_run, bundle, after)


def test_a_follow_up_reuses_its_slots_cache_and_equals_a_cold_run(
    trt_edge_run: Path, slots_bundle: Callable[..., Path]
) -> None:
    """Two conversations run at once, then each one's follow-up: each goes to the slot holding
    its conversation (the longest shared prefix), reuses it, and makes a cold run's tokens."""
    bundle = slots_bundle("qwen3")
    first = [request("x1", PROMPTS[0], 6), request("y1", PROMPTS[2], 6)]
    with Engine(trt_edge_run, bundle) as engine:
        engine.event()
        engine.send(*first)
        events = collect(engine, {"x1", "y1"})
        follow = {
            rid: [*body["prompt_ids"], *done_of(events, rid)["tokens"], 70, 71]
            for rid, body in (("x1", first[0]), ("y1", first[1]))
        }
        engine.send(request("y2", follow["y1"], 6), request("x2", follow["x1"], 6))
        warm = collect(engine, {"x2", "y2"})
        cold = terminal(engine.request(request("x3", follow["x1"], 6, reuse_prefix=False)))
    for rid, prompt in (("x2", PROMPTS[0]), ("y2", PROMPTS[2])):
        done = done_of(warm, rid)
        assert done["usage"]["reused_prompt_tokens"] == len(prompt) + 6 - 1
        assert done["steps"][0]["start"] == len(prompt) + 6 - 1
    assert cold["usage"]["reused_prompt_tokens"] == 0
    assert done_of(warm, "x2")["tokens"] == cold["tokens"]
    assert done_of(warm, "y2")["tokens"] == solo(
        trt_edge_run, bundle, request("y3", follow["y1"], 6)
    )


def test_a_request_cancelled_while_it_waits_is_answered_before_a_slot_frees(
    trt_edge_run: Path, slots_bundle: Callable[..., Path]
) -> None:
    """The slots hold constrained streams waiting for their second mask, which never comes;
    an infer held to run alone and a generate queued behind it are cancelled: each gets its
    `cancelled` error while every stream still waits, not once a slot frees."""
    bundle = slots_bundle("qwen3")
    streams = {f"s{k}" for k in range(SLOTS - 1)}
    busy = [request(rid, PROMPTS[0], 5, constrained=True) for rid in sorted(streams)]
    infer = {"id": "i", "op": "infer", "request": {"phase": "decode"}, "inputs": []}
    with Engine(trt_edge_run, bundle) as engine:
        vocab = engine.event()["generation"]["vocab_size"]
        engine.send(*busy, *[all_allowed(vocab, rid, 0) for rid in sorted(streams)])
        started = [engine.event() for _ in range(2 * len(streams))]  # mask answers, token 0s
        assert sorted(e["id"] for e in started if e["event"] == "token") == sorted(streams)
        engine.send(infer, request("q", PROMPTS[3], 5))
        engine.send({"id": "ci", "op": "cancel", "target": "i"})
        engine.send({"id": "cq", "op": "cancel", "target": "q"})
        events = collect(engine, {"ci", "cq", "i", "q"})
        engine.send(*[{"id": f"c-{rid}", "op": "cancel", "target": rid} for rid in streams])
        rest = collect(engine, streams)
    assert not [e for e in events if e["id"] in streams and e["event"] != "token"], events + rest
    for rid in ("i", "q"):
        (error,) = [e for e in events if e["id"] == rid]
        assert error["event"] == "error" and error["error"]["kind"] == "cancelled", events + rest
    assert all(done_of(rest, rid)["stop"] == "cancelled" for rid in streams), events + rest


def int64_tensor(name: str, shape: list[int], values: list[int]) -> dict[str, Any]:
    """An `infer` input of int64 `values` shaped `shape` (docs/engine-protocol.md)."""
    data = struct.pack(f"<{len(values)}q", *values)
    return {"name": name, "dtype": "int64", "shape": shape, "b64": base64.b64encode(data).decode()}


def test_an_infer_whose_inputs_disagree_on_batch_is_refused_naming_them(
    trt_edge_run: Path, slots_bundle: Callable[..., Path]
) -> None:
    """input_ids and cache_position of 2 rows but cache_slot of 1: each shape alone is inside
    the decode profile, the call is not. Refused naming the symbol and both inputs (as the
    Python runner does), not an opaque ExecuTorch failure; the engine goes on serving."""
    bundle = slots_bundle("qwen3")
    inputs = [
        int64_tensor("input_ids", [2, 1], [5, 6]),
        int64_tensor("cache_position", [2, 1], [0, 0]),
        int64_tensor("cache_slot", [1], [0]),
    ]
    with Engine(trt_edge_run, bundle) as engine:
        engine.event()
        body = {"id": "i", "op": "infer", "request": {"phase": "decode"}, "inputs": inputs}
        refused = terminal(engine.request(body))
        after = terminal(engine.request(request("g", PROMPTS[0], 4)))
    assert refused["event"] == "error", refused
    assert refused["error"]["kind"] == "request_refused"
    assert refused["error"]["field"] == "inputs"
    message = refused["error"]["message"]
    assert "symbol 'batch' is 2 in input 'input_ids' but 1 in input 'cache_slot'" in message
    assert after["event"] == "done" and after["tokens"] == solo(
        trt_edge_run, bundle, request("g", PROMPTS[0], 4)
    )
