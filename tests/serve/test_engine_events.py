"""The engine's event lines decode once into typed values, held to `engine-*.schema.json`: a
line that breaks its schema is an EngineProtocolError naming the field, never a KeyError in a
layer above; which `done` shape applies follows the request's op."""

from __future__ import annotations

from typing import Any

import pytest
from trt_edge_runner.serve.engine_events import (
    ControlDone,
    EngineProtocolError,
    Failure,
    GenerateDone,
    InferDone,
    Step,
    Token,
    decode_event,
    decode_ready,
)

TIMINGS = dict.fromkeys(
    ("prefill_ms", "time_to_first_token_ms", "decode_ms_per_token", "decode_tokens_per_s",
     "tokens_per_s", "total_ms"), 1.0,
)  # fmt: skip
GENERATE_DONE = {
    "id": "r1", "event": "done", "tokens": [42, 7], "stop": "eos",
    "usage": {"prompt_tokens": 3, "completion_tokens": 2, "reused_prompt_tokens": 1},
    "steps": [{"phase": "prefill", "profile": 1, "start": 0, "seq": 3, "ms": 2}],
    "timings": TIMINGS,
}  # fmt: skip
READY = {
    "event": "ready", "interface": 2,
    "runner": {"name": "trt-edge-run", "version": "0", "arch": "x86_64", "executorch": "1.5.1",
               "native_profile_guard": False, "verifies_digests": True, "backends": []},
    "model": {"name": "m", "version": "1"}, "mode": "emulated", "profile0_only": False,
    "digests_verified": True, "phases": {"decode": 0, "prefill": 1},
    "profiles": ["decode", "prefill"],
    "inputs": [{"name": "input_ids", "dtype": "int64", "shape": [1, "seq"]}],
    "outputs": [{"name": "logits", "dtype": "float32", "shape": [1, 64]}],
    "generation": {"contract": "causal_lm", "vocab_size": 64, "max_cache_len": 128,
                   "eos_token_ids": [1], "slots": 4},
}  # fmt: skip


def test_a_generate_done_decodes_to_typed_fields() -> None:
    done = decode_event(GENERATE_DONE, "generate")
    assert isinstance(done, GenerateDone)
    assert done.tokens == (42, 7) and done.stop == "eos"
    assert done.usage.reused_prompt_tokens == 1
    assert done.steps == (Step("prefill", 1, 0, 3, 2.0),)


def test_token_error_infer_and_control_events_decode() -> None:
    assert decode_event({"id": "r1", "event": "token", "index": 0, "token": 5}, "generate") == (
        Token(0, 5)
    )
    error = {"id": "r1", "event": "error",
             "error": {"kind": "usage", "message": "bad", "field": "sampling.top_p"}}  # fmt: skip
    assert decode_event(error, "generate") == Failure("usage", "bad", "sampling.top_p")
    output = {"name": "y", "dtype": "float32", "shape": [1], "b64": "AAAAAA=="}
    infer = {"id": "r2", "event": "done", "profile": 0, "profile_name": "decode",
             "outcome": "ok", "latency_ms": 1.5, "outputs": [output]}  # fmt: skip
    done = decode_event(infer, "infer")
    assert isinstance(done, InferDone) and done.outputs[0].shape == (1,)
    assert decode_event({"id": "p", "event": "done", "rss_bytes": 9}, "ping") == ControlDone(9)


@pytest.mark.parametrize(
    ("doc", "op", "names"),
    [
        ({"id": "r1", "event": "token", "index": 0, "token": "5"}, "generate", "token"),
        ({**GENERATE_DONE, "stop": "tired"}, "generate", "stop"),
        ({k: v for k, v in GENERATE_DONE.items() if k != "usage"}, "generate", "usage"),
        (GENERATE_DONE, "infer", "latency_ms"),  # a generate's done is not an infer's
        ({"id": "r1", "event": "token", "index": 0, "token": 5}, "infer", "infer"),
        ({"id": "r1", "event": "error", "error": {"kind": "usage"}}, "generate", "message"),
    ],
)
def test_a_line_that_breaks_its_schema_names_the_field(
    doc: dict[str, Any], op: str, names: str
) -> None:
    with pytest.raises(EngineProtocolError) as caught:
        decode_event(doc, op)
    assert names in str(caught.value)


def test_the_ready_line_decodes_and_a_broken_one_is_refused() -> None:
    info = decode_ready(READY)
    assert info.generation is not None and info.generation.eos_token_ids == (1,)
    assert info.generation.slots == 4
    assert info.inputs[0].shape == (1, "seq")
    with pytest.raises(EngineProtocolError, match="interface"):
        decode_ready({**READY, "interface": 3})
