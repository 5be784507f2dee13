"""`trt-edge-run --generate` on the tiny-LLM contract (examples/tiny_llm: KV caches passed in
and out, fed back by the loop): tokens equal eager PyTorch's and the Python `trt-edge
generate`'s, a one-token prompt is all decode, a prompt longer than the prefill profile runs in
chunks with the caches carried over, and requests or bundles outside the contract are refused."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from trt_edge.llm.generation import greedy_generate as generate
from trt_edge_runner.runner import Runner
from trt_edge_runner.runner_interface import EXIT_BUNDLE_FORMAT, EXIT_REQUEST_REFUSED, EXIT_USAGE

from tests.runner.tiny_llm_eager import eager_greedy

pytestmark = pytest.mark.slow

PROMPT = [5, 17, 42, 99, 3, 250, 7]


def cpp_generate(
    binary: Path, bundle: Path, prompt: list[int], new_tokens: int
) -> tuple[int, dict[str, Any]]:
    argv = [str(binary), "--bundle", str(bundle), "--generate", "--json"]
    argv += ["--prompt-ids", ",".join(map(str, prompt)), "--max-new-tokens", str(new_tokens)]
    done = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=600)
    return done.returncode, json.loads(done.stdout)


def test_tokens_equal_eager_and_the_python_generate(
    trt_edge_run: Path, tiny_llm_bundle: Path
) -> None:
    code, doc = cpp_generate(trt_edge_run, tiny_llm_bundle, PROMPT, 12)
    assert code == 0, doc
    assert doc["contract"] == "tiny_llm"
    assert doc["tokens"] == eager_greedy(PROMPT, 12)
    python = generate(Runner.open(tiny_llm_bundle), PROMPT, 12)
    assert doc["tokens"] == python.tokens
    assert [(s["phase"], s["profile"], s["seq"]) for s in doc["steps"]] == [
        (s.phase, s.profile, s.seq) for s in python.steps
    ]
    assert [s["start"] for s in doc["steps"]] == [0, *range(len(PROMPT), len(PROMPT) + 11)]
    assert doc["stop"] == "max_new_tokens"  # the tiny LLM has no eos
    assert set(doc["timings"]) >= {"prefill_ms", "time_to_first_token_ms", "tokens_per_s"}


def test_a_one_token_prompt_is_all_decode(trt_edge_run: Path, tiny_llm_bundle: Path) -> None:
    code, doc = cpp_generate(trt_edge_run, tiny_llm_bundle, [9], 4)
    assert code == 0, doc
    assert doc["tokens"] == eager_greedy([9], 4)
    assert {(s["phase"], s["profile"]) for s in doc["steps"]} == {("decode", 0)}


def test_a_prompt_longer_than_the_prefill_profile_runs_in_chunks(
    trt_edge_run: Path, tiny_llm_bundle: Path
) -> None:
    """Prefill takes seq 2..512: 520 tokens run as 512 + 8, the caches the first call returns
    fed to the second (the Python generate refuses this prompt: it runs the prompt in one
    call); eager runs all 520 at once."""
    prompt = [(13 * i + 5) % 256 for i in range(520)]
    code, doc = cpp_generate(trt_edge_run, tiny_llm_bundle, prompt, 4)
    assert code == 0, doc
    assert [(s["phase"], s["start"], s["seq"]) for s in doc["steps"][:2]] == [
        ("prefill", 0, 512),
        ("prefill", 512, 8),
    ]
    assert doc["tokens"] == eager_greedy(prompt, 4)


def test_requests_past_the_context_or_vocabulary_are_refused(
    trt_edge_run: Path, tiny_llm_bundle: Path
) -> None:
    code, doc = cpp_generate(trt_edge_run, tiny_llm_bundle, [1, 2], 640)
    assert code == EXIT_REQUEST_REFUSED
    assert doc["error"]["message"].startswith(
        "the prompt (2 tokens) and --max-new-tokens 640 exceed the context of 640 positions "
        "(bundle.json start_pos values)"
    )
    # The last new token is never fed back: prompt + N - 1 positions is exactly the context.
    code, doc = cpp_generate(trt_edge_run, tiny_llm_bundle, [1, 2], 639)
    assert code == 0 and len(doc["tokens"]) == 639
    assert doc["steps"][-1]["start"] == 639 and doc["steps"][-1]["seq"] == 1
    code, doc = cpp_generate(trt_edge_run, tiny_llm_bundle, [1, 256], 2)
    assert code == EXIT_USAGE
    assert "--prompt-ids: 256 outside the vocabulary [0, 256)" in doc["error"]["message"]


def test_a_bundle_of_neither_contract_is_refused(trt_edge_run: Path, llm_like_bundle: Path) -> None:
    code, doc = cpp_generate(trt_edge_run, llm_like_bundle, [1, 2], 2)
    assert code == EXIT_REQUEST_REFUSED
    error = doc["error"]
    assert error["file"] == f"{llm_like_bundle}/bundle.json"
    message = error["message"]
    assert "no llm section and no generation section (the inputs are ids, scale)" in message
    assert "examples/tiny_llm/model.py" in message


def edit_bundle_json(bundle: Path, edit: Any) -> None:
    """Edits bundle.json in place (it is not among the hashed files)."""
    doc = json.loads((bundle / "bundle.json").read_text())
    edit(doc)
    (bundle / "bundle.json").write_text(json.dumps(doc))


def test_the_declared_generation_section_is_read(trt_edge_run: Path, llm_bundle_copy: Path) -> None:
    def declare(doc: dict[str, Any]) -> None:
        logits = doc["io"]["outputs"][0]["name"]
        doc["generation"] = {
            "version": 1,
            "contract": "tiny_llm",
            "tokens": "input_ids",
            "start_position": "start_pos",
            "logits": logits,
        }
        # A section no schema defines is for another (newer) reader: not refused. (`memory` is
        # defined now, and held to bundle.schema.json: tests/vectors/bundle_documents.json.)
        doc["future_section"] = {"note": "a section for another reader"}

    edit_bundle_json(llm_bundle_copy, declare)
    code, doc = cpp_generate(trt_edge_run, llm_bundle_copy, PROMPT, 4)
    assert code == 0, doc
    assert doc["contract"] == "tiny_llm" and doc["tokens"] == eager_greedy(PROMPT, 4)
    # Declared, not recognised by names: without the section, input_ids/start_pos are nothing.
    edit_bundle_json(llm_bundle_copy, lambda d: d.pop("generation"))
    code, doc = cpp_generate(trt_edge_run, llm_bundle_copy, PROMPT, 4)
    assert code == EXIT_REQUEST_REFUSED
    assert "no llm section and no generation section" in doc["error"]["message"]
    edit_bundle_json(llm_bundle_copy, declare)
    # The section is what is read: a name it declares that the method lacks is refused.
    edit_bundle_json(llm_bundle_copy, lambda d: d["generation"].update(logits="nope"))
    code, doc = cpp_generate(trt_edge_run, llm_bundle_copy, PROMPT, 4)
    assert code == EXIT_BUNDLE_FORMAT
    assert "generation.logits" in doc["error"]["message"]
    edit_bundle_json(llm_bundle_copy, lambda d: d["generation"].update(version=2))
    code, doc = cpp_generate(trt_edge_run, llm_bundle_copy, PROMPT, 4)
    assert code == EXIT_BUNDLE_FORMAT
    assert "this runner reads generation section version 1" in doc["error"]["message"]
