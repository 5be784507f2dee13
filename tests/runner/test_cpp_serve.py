"""`trt-edge-run --serve` (docs/engine-protocol.md) on the tiny-LLM example and the vision
example: the real binary over pipes. The ready event describes the bundle; greedy tokens equal
`--generate`'s and eager PyTorch's, streamed one event per token; a seeded sampled request is
reproducible and equals `--generate` with the same flags; prefix reuse equals a cold run;
cancel, shutdown and end of input end what they should; malformed lines are answered with the
field named and the engine keeps serving; `infer` equals a `--phase` run on the same inputs."""

from __future__ import annotations

import base64
import json
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from trt_edge_runner.runner_interface import EXIT_BUNDLE_FORMAT

from tests.helpers.engine_client import Engine, terminal
from tests.runner.tiny_llm_eager import eager_greedy

pytestmark = pytest.mark.slow

PROMPT = [5, 17, 42, 99, 3, 250, 7]
SAMPLING = {"temperature": 1.3, "top_k": 40, "top_p": 0.9, "repetition_penalty": 1.2, "seed": 11}


def cli_generate(binary: Path, bundle: Path, prompt: list[int], new: int, *extra: str) -> Any:
    argv = [str(binary), "--bundle", str(bundle), "--generate", "--json", "--max-new-tokens"]
    argv += [str(new), "--prompt-ids", ",".join(map(str, prompt)), *extra]
    done = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=600)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def generate(engine: Engine, rid: str, prompt: list[int], new: int, **fields: Any) -> Any:
    request = {"id": rid, "op": "generate", "prompt_ids": prompt, "max_new_tokens": new}
    return engine.request({**request, **fields})


def test_ready_event_describes_the_bundle(trt_edge_run: Path, tiny_llm_bundle: Path) -> None:
    with Engine(trt_edge_run, tiny_llm_bundle) as engine:
        ready = engine.event()
        assert ready["event"] == "ready" and ready["interface"] == 2
        assert ready["generation"] == {
            "contract": "tiny_llm",
            "vocab_size": 256,
            "max_cache_len": 640,
            "eos_token_ids": [],
            "slots": 1,
        }
        assert ready["phases"] == {"decode": 0, "prefill": 1}
        assert ready["inputs"][0] == {"name": "input_ids", "dtype": "int64", "shape": [1, "seq"]}
        assert ready["digests_verified"] is True and ready["runner"]["name"] == "trt-edge-run"
        assert engine.close() == 0  # end of input: exit 0


def test_greedy_streams_the_tokens_of_generate(trt_edge_run: Path, tiny_llm_bundle: Path) -> None:
    want = cli_generate(trt_edge_run, tiny_llm_bundle, PROMPT, 12)
    assert want["tokens"] == eager_greedy(PROMPT, 12)
    with Engine(trt_edge_run, tiny_llm_bundle) as engine:
        engine.event()
        events = generate(engine, "r1", PROMPT, 12, stream=True)
        tokens = [e for e in events if e["event"] == "token"]
        assert [e["index"] for e in tokens] == list(range(12))
        done = terminal(events)
        assert [e["token"] for e in tokens] == done["tokens"] == want["tokens"]
        assert done["stop"] == "max_new_tokens"
        assert done["usage"] == {
            "prompt_tokens": len(PROMPT),
            "completion_tokens": 12,
            "reused_prompt_tokens": 0,
        }
        steps = [(s["phase"], s["profile"], s["start"], s["seq"]) for s in done["steps"]]
        assert steps == [(s["phase"], s["profile"], s["start"], s["seq"]) for s in want["steps"]]
        assert set(done["timings"]) == set(want["timings"])
        # stream false (the default): the terminal event alone, with every token.
        quiet = generate(engine, "r2", PROMPT, 12, reuse_prefix=False)
        assert len(quiet) == 1 and quiet[0]["tokens"] == want["tokens"]


def test_seeded_sampling_is_reproducible(trt_edge_run: Path, tiny_llm_bundle: Path) -> None:
    flags = ["--temperature", "1.3", "--top-k", "40", "--top-p", "0.9"]
    flags += ["--repetition-penalty", "1.2", "--sample-seed", "11"]
    cli = cli_generate(trt_edge_run, tiny_llm_bundle, PROMPT, 24, *flags)
    with Engine(trt_edge_run, tiny_llm_bundle) as engine:
        engine.event()
        first = terminal(generate(engine, "a", PROMPT, 24, sampling=SAMPLING))
        again = terminal(generate(engine, "b", PROMPT, 24, sampling=SAMPLING))
        other = terminal(generate(engine, "c", PROMPT, 24, sampling={**SAMPLING, "seed": 12}))
        greedy = terminal(generate(engine, "d", PROMPT, 24))
    assert first["tokens"] == again["tokens"] == cli["tokens"]
    assert again["usage"]["reused_prompt_tokens"] == len(PROMPT) - 1
    assert other["tokens"] != first["tokens"]  # another seed draws other tokens
    assert greedy["tokens"] != first["tokens"]


def test_prefix_reuse_equals_a_cold_run(trt_edge_run: Path, tiny_llm_bundle: Path) -> None:
    with Engine(trt_edge_run, tiny_llm_bundle) as engine:
        engine.event()
        turn1 = terminal(generate(engine, "t1", PROMPT, 10))
        follow = [*PROMPT, *turn1["tokens"], 11, 12, 13]
        turn2 = terminal(generate(engine, "t2", follow, 10))
        # The cache holds the prompt and every generated token but the last (never fed back).
        assert turn2["usage"]["reused_prompt_tokens"] == len(PROMPT) + 10 - 1
        assert turn2["steps"][0]["start"] == len(PROMPT) + 10 - 1
        # A prompt that leaves the conversation after 3 tokens reuses those 3.
        branch = [*PROMPT[:3], 200, 201, 202]
        turn3 = terminal(generate(engine, "t3", branch, 10))
        assert turn3["usage"]["reused_prompt_tokens"] == 3
        cold2 = terminal(generate(engine, "c2", follow, 10, reuse_prefix=False))
        cold3 = terminal(generate(engine, "c3", branch, 10, reuse_prefix=False))
        assert cold2["usage"]["reused_prompt_tokens"] == 0
    assert turn2["tokens"] == cold2["tokens"] == eager_greedy(follow, 10)
    assert turn3["tokens"] == cold3["tokens"] == eager_greedy(branch, 10)


def test_cancel_stops_a_generation_and_the_engine_serves_on(
    trt_edge_run: Path, tiny_llm_bundle: Path
) -> None:
    with Engine(trt_edge_run, tiny_llm_bundle) as engine:
        engine.event()
        long = {"id": "g", "op": "generate", "prompt_ids": PROMPT, "max_new_tokens": 600}
        # Both lines in one write: the reader handles the cancel while the engine prefills or
        # decodes the first tokens (600 tokens take far longer than reading one line).
        engine.send({**long, "stream": True}, {"id": "c", "op": "cancel", "target": "g"})
        events = engine.until_terminal("g")
        end = terminal(events)
        if end["event"] == "done":
            assert end["stop"] == "cancelled" and len(end["tokens"]) < 600
        else:  # cancelled before it started
            assert end["error"]["kind"] == "cancelled"
        if {"id": "c", "event": "done"} not in engine.aside:  # not yet read
            assert engine.until_terminal("c") == [{"id": "c", "event": "done"}]
        # A queued request cancelled before it starts is refused; the next one runs.
        engine.send(
            {**long, "id": "g2"},
            {**long, "id": "g3"},
            {"id": "c3", "op": "cancel", "target": "g3"},
        )
        assert terminal(engine.until_terminal("g2"))["event"] == "done"
        third = terminal(engine.until_terminal("g3"))
        assert third["event"] == "error" and third["error"]["kind"] == "cancelled"
        after = terminal(generate(engine, "ok", PROMPT, 3))
        assert after["tokens"] == eager_greedy(PROMPT, 3)
        # Cancelling an id not in flight is not an error.
        assert engine.request({"id": "c4", "op": "cancel", "target": "nope"}) == [
            {"id": "c4", "event": "done"}
        ]


BAD_LINES = [
    ("not json", None, "protocol", None),
    ("[1, 2]", None, "protocol", None),
    ('{"op": "ping"}', None, "protocol", "id"),
    ('{"id": "b1"}', "b1", "protocol", "op"),
    ('{"id": "b2", "op": "dance"}', "b2", "protocol", "op"),
    ('{"id": "b3", "op": "generate"}', "b3", "usage", "prompt_ids"),
    ('{"id": "b4", "op": "generate", "prompt_ids": []}', "b4", "usage", "prompt_ids"),
    ('{"id": "b5", "op": "generate", "prompt_ids": [1, -2]}', "b5", "usage", "prompt_ids[1]"),
    (
        '{"id": "b6", "op": "generate", "prompt_ids": [1], "max_new_tokens": 0}',
        "b6",
        "usage",
        "max_new_tokens",
    ),
    (
        '{"id": "b7", "op": "generate", "prompt_ids": [1], "sampling": {"top_p": 0}}',
        "b7",
        "usage",
        "sampling.top_p",
    ),
    (
        '{"id": "b8", "op": "generate", "prompt_ids": [1], "sampling": {"temprature": 1}}',
        "b8",
        "usage",
        "sampling.temprature",
    ),
    ('{"id": "b9", "op": "generate", "prompt_ids": [1], "stream": "yes"}', "b9", "usage", "stream"),
    ('{"id": "b10", "op": "generate", "prompt_ids": [300]}', "b10", "usage", "prompt_ids"),
    (
        '{"id": "b11", "op": "generate", "prompt_ids": [1], "sampling": {"temperature": -1}}',
        "b11",
        "usage",
        "sampling.temperature",
    ),
]


def test_malformed_lines_are_answered_naming_the_field(
    trt_edge_run: Path, tiny_llm_bundle: Path
) -> None:
    with Engine(trt_edge_run, tiny_llm_bundle, "--max-request-bytes", "1024") as engine:
        engine.event()
        for line, rid, kind, field in BAD_LINES:
            engine.send_line(line)
            event = engine.event()
            assert event["id"] == rid and event["event"] == "error", (line, event)
            assert event["error"]["kind"] == kind, (line, event)
            assert event["error"].get("field") == field, (line, event)
            if field:
                assert field.split("[")[0] in event["error"]["message"]
        engine.send_line(json.dumps({"id": "big", "op": "ping", "pad": "x" * 2000}))
        too_long = engine.event()
        assert too_long["id"] is None and "1024 bytes" in too_long["error"]["message"]
        assert engine.request({"id": "p", "op": "ping"})[0]["rss_bytes"] > 1_000_000
        # An id in flight is not reused.
        slow = {"id": "dup", "op": "generate", "prompt_ids": PROMPT, "max_new_tokens": 300}
        engine.send(slow, slow)
        events = engine.until_terminal("dup")
        errors = [e for e in events if e["event"] == "error"]
        if errors:  # the duplicate was refused (the first was still in flight)
            assert errors[0]["error"]["field"] == "id"
            events = engine.until_terminal("dup")
        assert terminal(events)["event"] == "done"
        engine.send({"id": "s", "op": "shutdown"})
        assert engine.event() == {"id": "s", "event": "done"}
        assert engine.process.wait(timeout=60) == 0


def test_end_of_input_answers_what_was_read(trt_edge_run: Path, tiny_llm_bundle: Path) -> None:
    lines = [
        json.dumps({"id": "x", "op": "generate", "prompt_ids": PROMPT, "max_new_tokens": 4}),
        json.dumps({"id": "y", "op": "generate", "prompt_ids": [9], "max_new_tokens": 2}),
    ]
    done = subprocess.run(
        [str(trt_edge_run), "--bundle", str(tiny_llm_bundle), "--serve"],
        input="\n".join(lines),  # no newline after the last line, then EOF
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert [(e.get("id"), e["event"]) for e in events] == [
        (None, "ready"),
        ("x", "done"),
        ("y", "done"),
    ]
    assert events[1]["tokens"] == eager_greedy(PROMPT, 4)


def test_a_bundle_that_does_not_load_is_the_json_error_document(
    trt_edge_run: Path, tmp_path: Path
) -> None:
    done = subprocess.run(
        [str(trt_edge_run), "--bundle", str(tmp_path), "--serve"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == EXIT_BUNDLE_FORMAT
    (line,) = done.stdout.splitlines()
    doc = json.loads(line)
    assert doc["ok"] is False and doc["error"]["kind"] == "bundle_format"


def tensor(name: str, array: np.ndarray) -> dict[str, Any]:
    return {
        "name": name,
        "dtype": str(array.dtype),
        "shape": list(array.shape),
        "b64": base64.b64encode(array.tobytes()).decode(),
    }


def test_infer_equals_a_phase_run(trt_edge_run: Path, vision_bundle: Path, tmp_path: Path) -> None:
    doc = json.loads((vision_bundle / "bundle.json").read_text())
    phase = sorted(doc["runtime"]["phases"])[0]
    inputs = tmp_path / "in"
    inputs.mkdir()
    rng = np.random.default_rng(0)
    arrays = {}
    with Engine(trt_edge_run, vision_bundle) as engine:
        ready = engine.event()
        assert ready["generation"] is None
        # The shapes a --phase run makes its random inputs at (the profile's opt).
        probe = subprocess.run(
            [str(trt_edge_run), "--bundle", str(vision_bundle), "--phase", phase, "--json"],
            capture_output=True,
            text=True,
            check=True,
        )
        for spec in json.loads(probe.stdout)["inputs"]:
            arrays[spec["name"]] = rng.standard_normal(spec["shape"]).astype(spec["dtype"])
            np.save(inputs / f"{spec['name']}.npy", arrays[spec["name"]])
        outputs = tmp_path / "out"
        run_phase = [str(trt_edge_run), "--bundle", str(vision_bundle), "--phase", phase]
        subprocess.run(
            [*run_phase, "--inputs", str(inputs), "--outputs", str(outputs)],
            capture_output=True,
            check=True,
        )
        request = {
            "id": "i1",
            "op": "infer",
            "request": {"phase": phase},
            "inputs": [tensor(n, a) for n, a in arrays.items()],
        }
        done = terminal(engine.request(request))
        assert done["event"] == "done", done
        assert done["profile"] == json.loads(probe.stdout)["profile"]
        for out in done["outputs"]:
            want = np.load(outputs / f"{out['name']}.npy")
            got = np.frombuffer(base64.b64decode(out["b64"]), dtype=out["dtype"])
            assert out["shape"] == list(want.shape)
            assert np.array_equal(got.reshape(want.shape), want)
        # auto picks a profile; an unknown phase, a wrong dtype, a generate: errors naming why.
        auto = terminal(engine.request({**request, "id": "i2", "request": {"auto": True}}))
        assert auto["event"] == "done" and auto["outcome"] == "ok"
        bad = terminal(engine.request({**request, "id": "i3", "request": {"phase": "nope"}}))
        assert bad["error"]["field"] == "request.phase" and phase in bad["error"]["message"]
        wrong = dict(request, id="i4")
        wrong["inputs"] = [tensor(n, a.astype(np.float64)) for n, a in arrays.items()]
        assert terminal(engine.request(wrong))["error"]["field"] == "inputs"
        gen = terminal(engine.request({"id": "g", "op": "generate", "prompt_ids": [1]}))
        assert gen["error"]["kind"] == "request_refused"
        assert terminal(engine.request({**request, "id": "i5"}))["event"] == "done"
