"""`trt-edge-device generate BUNDLE --prompt-ids ...`: greedy generation on a device through
the C++ runner (found through $TRT_EDGE_RUNNER), token ids in and out, the document read into
`GenerationRun`; the tokens are the host `trt-edge generate`'s; bad ids and bundles outside
the contract are the runner's typed refusals with the agent's exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from trt_edge.llm.generation import greedy_generate as generate
from trt_edge_runner.agent.config import FoundRunner
from trt_edge_runner.agent.errors import RunnerRefused
from trt_edge_runner.agent.runner_process import RunnerProcess
from trt_edge_runner.errors import EXIT_BAD_INPUT
from trt_edge_runner.runner import Runner

from tests.agent.device import Device

pytestmark = pytest.mark.slow

PROMPT = [5, 17, 42, 99]


def test_generate_prints_the_tokens_the_host_generates(
    device: Device, tiny_llm_bundle: Path
) -> None:
    ids = ",".join(map(str, PROMPT))
    done = device.run(
        "generate", str(tiny_llm_bundle), "--prompt-ids", ids, "--max-new-tokens", "6"
    )
    assert done.returncode == 0, done.stderr
    host = generate(Runner.open(tiny_llm_bundle), PROMPT, 6).tokens
    assert done.stdout == f"tokens: {','.join(map(str, host))}\n"
    assert "prefill: 4 token(s) in 1 call(s) on profile(s) [1]" in done.stderr
    assert "stop: max_new_tokens after 6 new token(s)" in done.stderr
    report = json.loads(
        device.run("generate", str(tiny_llm_bundle), "--prompt-ids", ids, "--json").stdout
    )
    assert (report["engine"], report["contract"]) == ("cpp", "tiny_llm")
    assert report["prompt_ids"] == PROMPT and len(report["tokens"]) == 16  # the default
    assert report["tokens"][:6] == host
    assert {"prefill_ms", "time_to_first_token_ms", "tokens_per_s"} <= set(report["timings"])


def test_the_runner_document_reads_into_a_generation_run(
    trt_edge_run: Path, tiny_llm_bundle: Path
) -> None:
    process = RunnerProcess.open(FoundRunner(trt_edge_run, "--runner"), 300.0)
    doc, run = process.generate(tiny_llm_bundle, PROMPT, 3)
    assert doc["ok"] is True and run.contract == "tiny_llm"
    assert run.prompt_ids == tuple(PROMPT) and run.max_new_tokens == 3 and len(run.tokens) == 3
    assert [(s.phase, s.profile, s.start, s.seq) for s in run.steps] == [
        ("prefill", 1, 0, 4),
        ("decode", 0, 4, 1),
        ("decode", 0, 5, 1),
    ]
    assert run.stop == "max_new_tokens" and run.timings["time_to_first_token_ms"]
    with pytest.raises(RunnerRefused) as refused:
        process.generate(tiny_llm_bundle, [1, 2], 700)
    assert refused.value.kind == "request_refused"
    assert "exceed the context of 640 positions" in str(refused.value)


@pytest.mark.parametrize(
    ("ids", "message"),
    [
        ("1,x", "--prompt-ids '1,x': expected comma-separated token ids"),
        ("1,256", "--prompt-ids: 256 outside the vocabulary [0, 256)"),
    ],
)
def test_bad_prompt_ids_are_bad_input(
    device: Device, tiny_llm_bundle: Path, ids: str, message: str
) -> None:
    done = device.run("generate", str(tiny_llm_bundle), "--prompt-ids", ids)
    assert done.returncode == EXIT_BAD_INPUT
    assert message in done.stderr and "usage: trt-edge-run" not in done.stderr


def test_a_bundle_outside_the_contract_is_refused(device: Device, vision_bundle: Path) -> None:
    done = device.run("generate", str(vision_bundle), "--prompt-ids", "1,2")
    assert done.returncode == EXIT_BAD_INPUT
    # Refused from bundle.json's declarations (neither `llm` nor `generation`), before a
    # runner starts: the contract is declared, never recognised by input names.
    assert f"{vision_bundle}/bundle.json: the bundle declares no generation contract" in done.stderr
    assert "generation: tiny_llm" in done.stderr and "Traceback" not in done.stderr
