"""`trt-edge-run --generate` on causal-LM bundles: the C++ runner's greedy tokens, calls and
stop equal the Python `greedy_generate` on the same bundle (short prompt, a prompt longer than
the prefill profile run in chunks, an eos stop); its JSON carries the Python document's
fields; requests the cache cannot hold, bad flags and bundles without the phases are refused
before anything executes; `--phase` runs of an llm bundle get the same cache bounds check."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from trt_edge.llm.generation import GreedyResult, greedy_generate
from trt_edge_runner.runner import Runner
from trt_edge_runner.runner_interface import (
    EXIT_BUNDLE_FORMAT,
    EXIT_REQUEST_REFUSED,
    EXIT_USAGE,
)

from tests.llm.llm_folders import GENERATE_TIMINGS, MAX_CACHE_LEN, PREFILL_MAX

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("llm-gemma3")]

PROMPT = [2, 40, 41, 42, 43]
LONG_PROMPT = [4 + (7 * i) % 500 for i in range(PREFILL_MAX + 6)]


def cpp_generate(
    binary: Path, bundle: Path, prompt: list[int], new_tokens: int, *extra: str
) -> subprocess.CompletedProcess[str]:
    ids = ",".join(str(t) for t in prompt)
    argv = [str(binary), "--bundle", str(bundle), "--generate", "--prompt-ids", ids]
    argv += ["--max-new-tokens", str(new_tokens), *extra]
    return subprocess.run(argv, capture_output=True, text=True, check=False, timeout=600)


def cpp_document(binary: Path, bundle: Path, prompt: list[int], new_tokens: int) -> Any:
    done = cpp_generate(binary, bundle, prompt, new_tokens, "--json")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 1, done.stdout
    return json.loads(lines[0])


def python_generate(bundle: Path, prompt: list[int], new_tokens: int) -> GreedyResult:
    return greedy_generate(Runner.open(bundle), prompt, new_tokens)


def calls(steps: list[dict[str, Any]]) -> list[tuple[str, int, int, int]]:
    return [(s["phase"], s["profile"], s["start"], s["seq"]) for s in steps]


def python_calls(result: GreedyResult) -> list[tuple[str, int, int, int]]:
    return [(s.phase, s.profile, s.start, s.seq) for s in result.steps]


@pytest.fixture
def bundle(mini_bundle: Callable[[str], Path]) -> Path:
    return mini_bundle("gemma3")


def with_llm(bundle: Path, copy: Path, edit: Callable[[dict[str, Any]], None]) -> Path:
    """A copy of `bundle` whose bundle.json is edited (it is not among the hashed files)."""
    shutil.copytree(bundle, copy)
    doc = json.loads((copy / "bundle.json").read_bytes())
    edit(doc)
    (copy / "bundle.json").write_text(json.dumps(doc))
    return copy


def test_tokens_and_calls_equal_the_python_greedy_generate(
    trt_edge_run: Path, bundle: Path
) -> None:
    doc = cpp_document(trt_edge_run, bundle, PROMPT, 10)
    reference = python_generate(bundle, PROMPT, 10)
    assert doc["tokens"] == reference.tokens
    assert doc["stop"] == reference.stop
    assert calls(doc["steps"]) == python_calls(reference)
    # The prompt ran under prefill's guard (profile 1), every new token under decode's (0).
    assert calls(doc["steps"])[0] == ("prefill", 1, 0, len(PROMPT))
    assert {(s["phase"], s["profile"]) for s in doc["steps"][1:]} == {("decode", 0)}


def test_a_prompt_longer_than_the_prefill_profile_runs_in_chunks_like_python(
    trt_edge_run: Path, bundle: Path
) -> None:
    doc = cpp_document(trt_edge_run, bundle, LONG_PROMPT, 6)
    reference = python_generate(bundle, LONG_PROMPT, 6)
    assert calls(doc["steps"])[:2] == [
        ("prefill", 1, 0, PREFILL_MAX),
        ("prefill", 1, PREFILL_MAX, 6),
    ]
    assert calls(doc["steps"]) == python_calls(reference)
    assert doc["tokens"] == reference.tokens


def test_generation_stops_at_an_eos_id_like_python(
    trt_edge_run: Path, bundle: Path, tmp_path: Path
) -> None:
    free = cpp_document(trt_edge_run, bundle, PROMPT, 8)
    eos = free["tokens"][2]

    def set_eos(doc: dict[str, Any]) -> None:
        doc["llm"]["eos_token_ids"] = [eos]

    copy = with_llm(bundle, tmp_path / "eos", set_eos)
    doc = cpp_document(trt_edge_run, copy, PROMPT, 8)
    stop_at = free["tokens"].index(eos)
    assert doc["tokens"] == free["tokens"][: stop_at + 1]  # the eos id is kept
    assert doc["stop"] == "eos"
    reference = python_generate(copy, PROMPT, 8)
    assert (doc["tokens"], doc["stop"]) == (reference.tokens, reference.stop)


def test_the_json_document_has_the_python_generate_fields(trt_edge_run: Path, bundle: Path) -> None:
    doc = cpp_document(trt_edge_run, bundle, PROMPT, 4)
    assert (doc["interface"], doc["ok"], doc["request"]) == (1, True, "generate")
    assert doc["contract"] == "causal_lm" and doc["mode"] == "emulated"
    assert doc["prompt_ids"] == PROMPT and doc["max_new_tokens"] == 4
    assert len(doc["tokens"]) == 4 and doc["stop"] == "max_new_tokens"
    assert doc["model"]["name"] == "mini-gemma3" and doc["digests_verified"] is True
    for step in doc["steps"]:
        assert set(step) == {"phase", "profile", "start", "seq", "ms"} and step["ms"] > 0
    timings = doc["timings"]
    assert set(timings) == GENERATE_TIMINGS == set(python_generate(bundle, PROMPT, 4).timings())
    assert all(value > 0 for value in timings.values())
    assert timings["time_to_first_token_ms"] >= timings["prefill_ms"]
    assert timings["total_ms"] >= timings["time_to_first_token_ms"]


def test_plain_output_is_the_ids_with_a_summary_on_stderr(trt_edge_run: Path, bundle: Path) -> None:
    tokens = cpp_document(trt_edge_run, bundle, PROMPT, 5)["tokens"]
    done = cpp_generate(trt_edge_run, bundle, PROMPT, 5)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"tokens: {','.join(map(str, tokens))}\n"
    lines = done.stderr.splitlines()
    assert lines[0].startswith("prefill: 5 token(s) in 1 call(s) on profile(s) [1], ")
    assert lines[1].startswith("decode: 4 token(s) on profile(s) [0], ")
    assert lines[2] == "stop: max_new_tokens after 5 new token(s)"


def test_a_request_the_cache_cannot_hold_is_refused_before_anything_runs(
    trt_edge_run: Path, bundle: Path
) -> None:
    done = cpp_generate(trt_edge_run, bundle, [2, 3, 4], MAX_CACHE_LEN, "--json", "--progress")
    assert done.returncode == EXIT_REQUEST_REFUSED
    message = json.loads(done.stdout)["error"]["message"]
    assert message.startswith(
        f"the prompt (3 tokens) and --max-new-tokens {MAX_CACHE_LEN} need {MAX_CACHE_LEN + 2} "
        f"cache positions; the bundle's KV cache holds {MAX_CACHE_LEN} (llm.max_cache_len): "
        "shorten one of them"
    )
    assert "loading model.pte" not in done.stderr and "generating" not in done.stderr
    # The largest request that fits runs: the last token needs no slot.
    doc = cpp_document(trt_edge_run, bundle, [2, 3, 4], MAX_CACHE_LEN - 2)
    assert doc["steps"][-1]["start"] == MAX_CACHE_LEN - 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--prompt-ids", "2,3,999"], "--prompt-ids: 999 outside the vocabulary [0, 512)"),
        (["--prompt-ids", "2,x,4"], "--prompt-ids 2,x,4: 'x' is not an integer"),
        (["--prompt-ids", "2,,4"], "--prompt-ids 2,,4: expected comma-separated integers"),
        (["--prompt-ids", "2,-1"], "--prompt-ids 2,-1: -1 is negative"),
        (["--prompt-ids", "2", "--max-new-tokens", "0"], "--max-new-tokens 0: must be between 1"),
        ([], "generate: --prompt-ids 1,2,3 is required"),
        (["--prompt-ids", "2", "--phase", "decode"], "exactly one of --phase, --profile, --auto"),
        (["--prompt-ids", "2", "--phases", "all"], "exactly one of --phase, --profile, --auto"),
        (["--prompt-ids", "2", "--dims", "seq=4"], "generate: --dims is not a flag of generate"),
    ],
)
def test_bad_flags_are_usage_errors_naming_the_flag(
    trt_edge_run: Path, bundle: Path, args: list[str], message: str
) -> None:
    argv = [str(trt_edge_run), "--bundle", str(bundle), "--generate", *args, "--json"]
    done = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=300)
    assert done.returncode == EXIT_USAGE, done.stderr
    error = json.loads(done.stdout)["error"]
    assert error["kind"] == "usage" and message in error["message"], error["message"]


def test_prompt_ids_need_generate(trt_edge_run: Path, bundle: Path) -> None:
    argv = [str(trt_edge_run), "--bundle", str(bundle), "--phase", "decode", "--prompt-ids", "2"]
    done = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=300)
    assert done.returncode == EXIT_USAGE
    assert "run: --prompt-ids is not a flag of run; it goes with generate" in done.stderr


def test_a_phase_the_policy_does_not_name_runs_under_auto_like_python(
    trt_edge_run: Path, bundle: Path, tmp_path: Path
) -> None:
    """A causal-LM bundle whose runtime.phases lacks decode: both runners run the new tokens
    under `auto` (sticky first-fit over the profiles), with the same tokens and calls."""

    def drop_decode(doc: dict[str, Any]) -> None:
        del doc["runtime"]["phases"]["decode"]

    copy = with_llm(bundle, tmp_path / "no-decode", drop_decode)
    doc = cpp_document(trt_edge_run, copy, PROMPT, 3)
    reference = python_generate(copy, PROMPT, 3)
    assert doc["tokens"] == reference.tokens
    assert calls(doc["steps"]) == python_calls(reference)
    assert [s["profile"] for s in doc["steps"][1:]] == [0, 0]  # auto: the seq-1 profile fits


def test_a_one_token_prompt_counts_its_call_as_prefill_time(
    trt_edge_run: Path, bundle: Path
) -> None:
    """A 1-token prompt runs under decode (the prefill profile takes seq >= 2), but it is the
    prompt: its call is the prefill time in both runners, not nothing."""
    doc = cpp_document(trt_edge_run, bundle, PROMPT[:1], 3)
    assert calls(doc["steps"])[0] == ("decode", 0, 0, 1)
    assert doc["timings"]["prefill_ms"] == pytest.approx(doc["steps"][0]["ms"], abs=1e-3)
    assert doc["timings"]["prefill_ms"] > 0
    reference = python_generate(bundle, PROMPT[:1], 3).timings()
    assert reference["prefill_ms"] is not None and reference["prefill_ms"] > 0


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda s: s.update(version=4),
            "llm.version: this runner reads llm section version 1, 2 or 3",
        ),
        (
            lambda s: (s.update(version=2), s["inputs"].pop("window", None)),
            "llm.inputs.window: missing",
        ),
        (lambda s: s.pop("max_cache_len"), "llm.max_cache_len: missing"),
        (lambda s: s.update(max_cache_len=0), "llm.max_cache_len: must be >= 1, got 0"),
        (lambda s: s.update(logits="logits"), "llm.logits: 'logits' is not an output"),
        (
            lambda s: s["inputs"].update(positions="start_pos"),
            "llm.inputs.positions: 'start_pos' is not an input",
        ),
        (lambda s: s.update(eos_token_ids=[1, "2"]), "llm.eos_token_ids: expected a list of"),
        (lambda s: s.update(tokenizer="vocab.json"), "llm.tokenizer: 'vocab.json' is not listed"),
        (lambda s: s.update(vocab_size=True), "llm.vocab_size: expected an integer, got true"),
        (lambda s: s.update(method="prefill"), "llm.method: 'prefill' is not io.method 'forward'"),
    ],
)
def test_an_llm_section_the_runner_cannot_honour_is_a_bundle_format_refusal(
    trt_edge_run: Path,
    bundle: Path,
    tmp_path: Path,
    edit: Callable[[dict[str, Any]], None],
    message: str,
) -> None:
    copy = with_llm(bundle, tmp_path / "edited", lambda doc: edit(doc["llm"]))
    for request in (["--generate", "--prompt-ids", "2"], ["--phase", "decode"]):
        argv = [str(trt_edge_run), "--bundle", str(copy), *request, "--json"]
        done = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=300)
        assert done.returncode == EXIT_BUNDLE_FORMAT, done.stderr
        assert f"{copy}/bundle.json: {message}" in json.loads(done.stdout)["error"]["message"]


def test_phase_runs_of_an_llm_bundle_get_the_cache_bounds_check(
    trt_edge_run: Path, bundle: Path, tmp_path: Path
) -> None:
    """The rule the Python runner applies, with its message; the last slots still work."""
    inputs = tmp_path / "in"
    inputs.mkdir()
    np.save(inputs / "input_ids.npy", np.asarray([[3, 4]], np.int64))
    np.save(inputs / "cache_window.npy", np.arange(MAX_CACHE_LEN, dtype=np.int64))
    for start, code in ((MAX_CACHE_LEN - 2, 0), (MAX_CACHE_LEN - 1, EXIT_REQUEST_REFUSED)):
        np.save(inputs / "cache_position.npy", np.arange(start, start + 2, dtype=np.int64))
        argv = [str(trt_edge_run), "--bundle", str(bundle), "--phase", "prefill"]
        done = subprocess.run(
            [*argv, "--inputs", str(inputs)], capture_output=True, text=True, check=False
        )
        assert done.returncode == code, done.stderr
    assert (
        f"input 'cache_position' holds position {MAX_CACHE_LEN} (start {MAX_CACHE_LEN - 1}, "
        f"seq 2): the KV cache has positions [0, {MAX_CACHE_LEN}) (bundle.json "
        f"llm.max_cache_len {MAX_CACHE_LEN}); a call needs start >= 0 and start + seq <= "
        f"{MAX_CACHE_LEN}: start a new sequence at position 0"
    ) in done.stderr
    np.save(inputs / "cache_position.npy", np.asarray([-1, 0], np.int64))
    argv = [str(trt_edge_run), "--bundle", str(bundle), "--phase", "prefill"]
    done = subprocess.run(
        [*argv, "--inputs", str(inputs)], capture_output=True, text=True, check=False
    )
    assert done.returncode == EXIT_REQUEST_REFUSED
    assert "holds position -1 (start -1, seq 2)" in done.stderr


@pytest.mark.xdist_group("llm-gemma3-example")
def test_the_seed_gemma3_example_generates_the_python_tokens(
    trt_edge_run: Path, gemma3_example_bundle: Path
) -> None:
    """The seed's mini Gemma-3 (prefill profile 2..256): a 300-token prompt in two calls."""
    prompt = [3 + (11 * i) % 2000 for i in range(300)]
    doc = cpp_document(trt_edge_run, gemma3_example_bundle, prompt, 8)
    reference = python_generate(gemma3_example_bundle, prompt, 8)
    assert calls(doc["steps"])[:2] == [("prefill", 1, 0, 256), ("prefill", 1, 256, 44)]
    assert calls(doc["steps"]) == python_calls(reference)
    assert doc["tokens"] == reference.tokens
