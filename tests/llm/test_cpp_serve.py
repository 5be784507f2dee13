"""`trt-edge-run --serve` on causal-LM bundles (the minis, the Gemma-3 one with sliding-window
layers): a follow-up turn that reuses the kept KV cache gives the tokens of a cold run, token
for token, greedy and seeded-sampled, whether it continues the conversation or leaves it part
way; a stop token ends generation and is kept; a full cache ends it with "cache_full" after
the tokens `--generate` makes; streamed tokens are the terminal event's; an `infer` (which
overwrites the cache) makes the next turn start cold; `--single-thread` gives the same tokens
with no work on any other thread."""

from __future__ import annotations

import base64
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.helpers.engine_client import Engine, cli_tokens, terminal
from tests.llm.llm_folders import MAX_CACHE_LEN, PREFILL_MAX, SLIDING_WINDOW

pytestmark = pytest.mark.slow

PROMPT = [2, 40, 41, 42, 43, 44, 45, 46, 47, 48]
SEEDED = {"temperature": 0.9, "top_p": 0.95, "seed": 5}


def generate(engine: Engine, rid: str, prompt: list[int], new: int, **fields: Any) -> Any:
    request = {"id": rid, "op": "generate", "prompt_ids": prompt, "max_new_tokens": new}
    done = terminal(engine.request({**request, "ignore_eos": True, **fields}))
    assert done["event"] == "done", done
    return done


@pytest.mark.parametrize(
    "arch",
    [
        pytest.param("gemma3", marks=pytest.mark.xdist_group("llm-gemma3")),
        pytest.param("qwen3", marks=pytest.mark.xdist_group("llm-qwen3")),
    ],
)
def test_prefix_reuse_equals_a_cold_run(
    trt_edge_run: Path, mini_bundle: Callable[[str], Path], arch: str
) -> None:
    bundle = mini_bundle(arch)
    with Engine(trt_edge_run, bundle) as engine:
        ready = engine.event()
        assert ready["generation"]["contract"] == "causal_lm"
        assert ready["generation"]["max_cache_len"] == MAX_CACHE_LEN
        results: dict[str, Any] = {}
        for sampling in ({}, SEEDED):
            turn1 = generate(engine, "t1", PROMPT, 8, sampling=sampling)
            # The follow-up is longer than the sliding window and than a prefill call.
            follow = [*PROMPT, *turn1["tokens"], 60, 61, 62, 63, 64, 65, 66]
            assert len(follow) > max(SLIDING_WINDOW, PREFILL_MAX)
            turn2 = generate(engine, "t2", follow, 8, sampling=sampling)
            assert turn2["usage"]["reused_prompt_tokens"] == len(PROMPT) + 8 - 1
            assert turn2["steps"][0]["start"] == len(PROMPT) + 8 - 1
            # Leaving the conversation after 12 tokens: those 12 are reused.
            branch = [*follow[:12], 70, 71, 72]
            turn3 = generate(engine, "t3", branch, 8, sampling=sampling)
            assert turn3["usage"]["reused_prompt_tokens"] == 12
            cold2 = generate(engine, "c2", follow, 8, sampling=sampling, reuse_prefix=False)
            cold3 = generate(engine, "c3", branch, 8, sampling=sampling, reuse_prefix=False)
            assert cold2["usage"]["reused_prompt_tokens"] == 0
            assert turn2["tokens"] == cold2["tokens"]
            assert turn3["tokens"] == cold3["tokens"]
            results[json.dumps(sampling)] = (follow, branch, turn2["tokens"], turn3["tokens"])
    # Greedy: also what a fresh process's --generate makes.
    follow, branch, tokens2, tokens3 = results["{}"]
    assert tokens2 == cli_tokens(trt_edge_run, bundle, follow, 8)
    assert tokens3 == cli_tokens(trt_edge_run, bundle, branch, 8)
    assert results[json.dumps(SEEDED)][2] != tokens2  # the sampled turn is not greedy


@pytest.mark.xdist_group("llm-gemma3")
def test_stop_token_and_full_cache(trt_edge_run: Path, mini_bundle: Callable[[str], Path]) -> None:
    bundle = mini_bundle("gemma3")
    long_prompt = [4 + (7 * i) % 500 for i in range(MAX_CACHE_LEN - 8)]
    want = cli_tokens(trt_edge_run, bundle, long_prompt, 9)  # fills the cache exactly
    with Engine(trt_edge_run, bundle) as engine:
        engine.event()
        events = engine.request(
            {
                "id": "full",
                "op": "generate",
                "prompt_ids": long_prompt,
                "max_new_tokens": 100,
                "ignore_eos": True,
                "stream": True,
            }
        )
        done = terminal(events)
        assert done["stop"] == "cache_full" and done["tokens"] == want
        assert [e["token"] for e in events if e["event"] == "token"] == want
        stop = want[3]
        first = want.index(stop)
        stopped = generate(engine, "s", long_prompt, 9, stop_token_ids=[stop])
        assert stopped["stop"] == "stop_token" and stopped["tokens"] == want[: first + 1]
        too_long = engine.request(
            {"id": "x", "op": "generate", "prompt_ids": [5] * (MAX_CACHE_LEN + 1)}
        )
        assert terminal(too_long)["error"]["kind"] == "request_refused"
        assert terminal(too_long)["error"]["field"] == "prompt_ids"


@pytest.mark.xdist_group("llm-gemma3")
def test_sections_for_other_readers_are_not_refused(
    trt_edge_run: Path, mini_bundle: Callable[[str], Path], tmp_path: Path
) -> None:
    bundle = Path(shutil.copytree(mini_bundle("gemma3"), tmp_path / "bundle"))
    doc = json.loads((bundle / "bundle.json").read_text())
    doc["llm"]["chat_template"] = "{{ messages }}"
    doc["llm"]["special_tokens"] = {"bos_token": "<bos>"}
    # Well-formed sections the engine itself does not use (the C++ reader checks their types
    # against bundle.schema.json: tests/vectors/bundle_documents.json), and one from the future.
    keys = ("weights_bytes", "planned_bytes", "kv_cache_bytes", "runner_bytes", "total_bytes")
    doc["memory"] = dict.fromkeys(keys, 1)
    doc["future_section"] = {"anything": [1, "two"]}
    (bundle / "bundle.json").write_text(json.dumps(doc))
    with Engine(trt_edge_run, bundle) as engine:
        assert engine.event()["generation"]["contract"] == "causal_lm"
        assert generate(engine, "r", PROMPT, 2)["stop"] == "max_new_tokens"
    doc["llm"]["chat_template"] = None
    (bundle / "bundle.json").write_text(json.dumps(doc))
    assert len(cli_tokens(trt_edge_run, bundle, PROMPT, 2)) == 2


@pytest.mark.xdist_group("llm-gemma3")
def test_an_infer_drops_the_kept_prefix(
    trt_edge_run: Path, mini_bundle: Callable[[str], Path]
) -> None:
    """An `infer` runs the method on the client's tensors, so it overwrites the KV cache slots
    the kept conversation lives in: the next `generate` must start cold (nothing reused) and
    give a cold run's tokens, although its prompt shares the kept prefix."""
    bundle = mini_bundle("gemma3")
    with Engine(trt_edge_run, bundle) as engine:
        ready = engine.event()
        turn1 = generate(engine, "t1", PROMPT, 6)
        follow = [*PROMPT, *turn1["tokens"], 60, 61]
        # Other tokens at the kept conversation's first positions, under the prefill phase.
        other = np.array([[90, 91, 92, 93, 94, 95, 96, 97]], dtype=np.int64)
        positions = np.arange(other.shape[1], dtype=np.int64)
        # cache_window (`attention: filled`): any length covering the 8 positions written.
        tensors = {"input_ids": other, "cache_position": positions, "cache_window": positions}
        assert [spec["name"] for spec in ready["inputs"]] == list(tensors)
        inputs = [
            {"name": name, "dtype": "int64", "shape": list(array.shape),
             "b64": base64.b64encode(array.tobytes()).decode()}
            for name, array in tensors.items()
        ]  # fmt: skip
        infer = terminal(
            engine.request(
                {"id": "i", "op": "infer", "request": {"phase": "prefill"}, "inputs": inputs}
            )
        )
        assert infer["event"] == "done", infer
        after = generate(engine, "t2", follow, 6)
        assert after["usage"]["reused_prompt_tokens"] == 0
        cold = generate(engine, "c", follow, 6, reuse_prefix=False)
    assert after["tokens"] == cold["tokens"] == cli_tokens(trt_edge_run, bundle, follow, 6)


ROUNDS, NEW = 40, MAX_CACHE_LEN - len(PROMPT)


def thread_ticks(pid: int) -> dict[int, int]:
    """CPU clock ticks (user + system) each thread of `pid` has used (Linux /proc)."""
    ticks = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
        ticks[int(task.name)] = int(fields[11]) + int(fields[12])
    return ticks


@pytest.mark.xdist_group("llm-gemma3")
def test_single_thread_runs_every_kernel_on_the_engine_thread(
    trt_edge_run: Path, mini_bundle: Callable[[str], Path]
) -> None:
    """`--single-thread` (what the service asks for on two cores): the same greedy tokens as
    the default engine and as `--generate`, and no other thread of the engine does any work
    (ExecuTorch's pool may exist but gets nothing; the request reader waits in read(2))."""
    bundle = mini_bundle("gemma3")
    tokens: dict[tuple[str, ...], list[int]] = {}
    others: dict[tuple[str, ...], int] = {}
    for flags in ((), ("--single-thread",)):
        with Engine(trt_edge_run, bundle, *flags) as engine:
            engine.event()
            for n in range(ROUNDS):
                done = generate(engine, f"r{n}", PROMPT, NEW, reuse_prefix=False)
                assert tokens.setdefault(flags, done["tokens"]) == done["tokens"]
            ticks = thread_ticks(engine.process.pid)
        others[flags] = sum(n for tid, n in ticks.items() if tid != engine.process.pid)
    # At most a clock tick of start-up work (the default engine's pool worker used 7 here).
    assert others[("--single-thread",)] <= 1, others
    assert (
        tokens[()] == tokens[("--single-thread",)] == cli_tokens(trt_edge_run, bundle, PROMPT, NEW)
    )
