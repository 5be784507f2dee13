"""`trt-edge generate` on a causal-LM bundle: text in, text out, tokens equal transformers'
`generate(do_sample=False)`, the JSON fields, chunked long prompts, eos, and refusals."""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from trt_edge_runner.errors import EXIT_BAD_INPUT

from tests.llm.llm_folders import GENERATE_TIMINGS, MAX_CACHE_LEN, PREFILL_MAX

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("llm-gemma3")]

TEXT = "The cache is a buffer of keys and values"


@pytest.fixture
def generate(trt_edge_cli: Callable[..., Any]) -> Callable[..., Any]:
    """`trt-edge generate BUNDLE ARGS...` through the real CLI shell, in this process."""

    def run(bundle: Path, *args: str) -> Any:
        return trt_edge_cli("generate", bundle, *args)

    return run


def transformers_generate(folder: Path, ids: list[int], new_tokens: int) -> list[int]:
    import torch
    from transformers import AutoModelForCausalLM

    model: Any = AutoModelForCausalLM.from_pretrained(
        folder, dtype=torch.float32, local_files_only=True
    )
    with torch.no_grad():
        out = model.eval().generate(
            torch.tensor([ids]),
            attention_mask=torch.ones(1, len(ids), dtype=torch.int64),
            max_new_tokens=new_tokens,
            do_sample=False,
        )
    return [int(t) for t in out[0, len(ids) :]]


@pytest.fixture
def project(mini_project: Callable[[str], Path], mini_bundle: Callable[[str], Path]) -> Any:
    """(folder, bundle) of the Gemma-3 mini."""
    return mini_project("gemma3").parent / "folder", mini_bundle("gemma3")


def test_text_prompt_json_has_ids_tokens_text_and_timings(
    project: Any, generate: Callable[..., Any]
) -> None:
    from transformers import AutoTokenizer

    folder, bundle = project
    done = generate(bundle, "--prompt", TEXT, "--max-new-tokens", "10", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    assert report["prompt"] == TEXT
    assert report["prompt_ids"] == tokenizer(TEXT)["input_ids"]
    assert report["tokens"] == transformers_generate(folder, report["prompt_ids"], 10)
    assert report["text"] == tokenizer.decode(report["tokens"], skip_special_tokens=True)
    assert report["stop"] in ("max_new_tokens", "eos")
    assert report["mode"] == "emulated"
    timings = report["timings"]
    assert set(timings) == GENERATE_TIMINGS
    assert all(value > 0 for value in timings.values())
    assert timings["time_to_first_token_ms"] >= timings["prefill_ms"]
    steps = report["steps"]
    assert (steps[0]["phase"], steps[0]["start"], steps[0]["seq"]) == (
        "prefill",
        0,
        len(report["prompt_ids"]),
    )
    assert [s["start"] for s in steps[1:]] == list(
        range(len(report["prompt_ids"]), len(report["prompt_ids"]) + len(steps) - 1)
    )
    assert {s["phase"] for s in steps[1:]} == {"decode"}
    assert {s["profile"] for s in steps[1:]} == {0}


def test_plain_output_is_the_text_with_a_summary_on_stderr(
    project: Any, generate: Callable[..., Any]
) -> None:
    _, bundle = project
    as_json = json.loads(
        generate(bundle, "--prompt", TEXT, "--max-new-tokens", "6", "--json").stdout
    )
    done = generate(bundle, "--prompt", TEXT, "--max-new-tokens", "6")
    assert done.returncode == 0, done.stderr
    assert done.stdout == as_json["text"] + "\n"
    assert "prefill:" in done.stderr and "decode:" in done.stderr and "stop:" in done.stderr


def test_prompt_ids_still_work_and_come_back_as_text_too(
    project: Any, generate: Callable[..., Any]
) -> None:
    folder, bundle = project
    done = generate(bundle, "--prompt-ids", "2,40,41,42,43", "--max-new-tokens", "5", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["prompt_ids"] == [2, 40, 41, 42, 43] and report["prompt"] is None
    assert report["tokens"] == transformers_generate(folder, [2, 40, 41, 42, 43], 5)
    assert isinstance(report["text"], str)


def test_a_prompt_longer_than_the_prefill_profile_runs_in_chunks(
    project: Any, generate: Callable[..., Any]
) -> None:
    folder, bundle = project
    ids = [4 + (7 * i) % 500 for i in range(PREFILL_MAX + 6)]
    done = generate(
        bundle, "--prompt-ids", ",".join(map(str, ids)), "--max-new-tokens", "6", "--json"
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    prompt_steps = [s for s in report["steps"] if s["start"] < len(ids)]
    assert [(s["phase"], s["start"], s["seq"]) for s in prompt_steps] == [
        ("prefill", 0, PREFILL_MAX),
        ("prefill", PREFILL_MAX, 6),
    ]
    assert report["tokens"] == transformers_generate(folder, ids, 6)


def test_generation_stops_at_an_eos_id_and_keeps_it(
    project: Any, tmp_path: Path, generate: Callable[..., Any]
) -> None:
    _, bundle = project
    free = json.loads(generate(bundle, "--prompt", TEXT, "--max-new-tokens", "8", "--json").stdout)
    eos = free["tokens"][3]
    copy = tmp_path / "bundle"
    shutil.copytree(bundle, copy)
    doc = json.loads((copy / "bundle.json").read_bytes())
    doc["llm"]["eos_token_ids"] = [eos]  # bundle.json itself is not hashed (only signed)
    (copy / "bundle.json").write_text(json.dumps(doc))
    report = json.loads(generate(copy, "--prompt", TEXT, "--max-new-tokens", "8", "--json").stdout)
    stop_at = free["tokens"].index(eos)
    assert report["tokens"] == free["tokens"][: stop_at + 1]
    assert report["stop"] == "eos"


def test_requests_the_cache_cannot_hold_are_refused_before_running(
    project: Any, generate: Callable[..., Any]
) -> None:
    _, bundle = project
    done = generate(bundle, "--prompt-ids", "2,3,4", "--max-new-tokens", str(MAX_CACHE_LEN))
    assert done.returncode == EXIT_BAD_INPUT
    assert (
        f"the prompt (3 tokens) and --max-new-tokens {MAX_CACHE_LEN} need {MAX_CACHE_LEN + 2} "
        f"cache positions; the bundle's KV cache holds {MAX_CACHE_LEN}"
    ) in done.stderr
    done = generate(bundle, "--prompt-ids", "2,3,999", "--max-new-tokens", "2")
    assert done.returncode == EXIT_BAD_INPUT
    assert "prompt ids [999] are outside the vocabulary [0, 512)" in done.stderr


def test_text_needs_a_tokenizer_in_the_bundle(
    project: Any, tmp_path: Path, generate: Callable[..., Any]
) -> None:
    _, bundle = project
    copy = tmp_path / "bundle"
    shutil.copytree(bundle, copy)
    doc = json.loads((copy / "bundle.json").read_bytes())
    doc["llm"]["tokenizer"] = None
    (copy / "bundle.json").write_text(json.dumps(doc))
    done = generate(copy, "--prompt", TEXT)
    assert done.returncode == EXIT_BAD_INPUT
    assert "the bundle carries no tokenizer" in done.stderr and "--prompt-ids" in done.stderr
    ids = json.loads(generate(copy, "--prompt-ids", "2,5,6", "--json").stdout)
    assert ids["text"] is None and ids["tokens"]


def test_without_the_tokenizers_package_ids_still_work_and_text_is_refused(
    project: Any, generate: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`tokenizers` is an optional extra: on a host without it, --prompt-ids generates (no
    text, said on stderr) and --prompt is refused naming the package."""
    _, bundle = project
    monkeypatch.setitem(sys.modules, "tokenizers", None)  # `import tokenizers` now fails
    ids = generate(bundle, "--prompt-ids", "2,5,6", "--max-new-tokens", "3", "--json")
    assert ids.returncode == 0, ids.stderr
    report = json.loads(ids.stdout)
    assert report["text"] is None and len(report["tokens"]) == 3
    assert "no text shown: text needs the `tokenizers` package" in ids.stderr
    text = generate(bundle, "--prompt", TEXT)
    assert text.returncode == EXIT_BAD_INPUT
    assert "text needs the `tokenizers` package on this host" in text.stderr


def test_the_tiny_llm_contract_takes_ids_only(
    tiny_llm_bundle: Path, generate: Callable[..., Any]
) -> None:
    done = generate(tiny_llm_bundle, "--prompt", "hello")
    assert done.returncode == EXIT_BAD_INPUT
    assert "carries no tokenizer" in done.stderr and "--prompt-ids" in done.stderr
