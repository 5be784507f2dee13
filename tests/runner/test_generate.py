"""`trt-edge generate` on the tiny-LLM bundle: greedy tokens equal eager PyTorch's."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from trt_edge.cli.main import main as host_main
from trt_edge.llm.errors import GenerateContractError
from trt_edge.llm.generation import greedy_generate as generate
from trt_edge_runner.runner import Runner

from tests.runner.tiny_llm_eager import eager_greedy

pytestmark = pytest.mark.slow


def test_generate_matches_eager_greedy_tokens(tiny_llm_bundle: Path) -> None:
    prompt = [5, 17, 42, 99, 3, 250, 7]
    runner = Runner.open(tiny_llm_bundle)
    result = generate(runner, prompt, 12)
    assert result.tokens == eager_greedy(prompt, 12)
    # The prompt ran on the prefill profile, every new token on the decode profile.
    phases = runner.manifest.runtime.phases
    assert [s.profile for s in result.steps] == [phases["prefill"]] + [phases["decode"]] * 11


def test_generate_single_token_prompt_decodes_from_the_start(tiny_llm_bundle: Path) -> None:
    runner = Runner.open(tiny_llm_bundle)
    result = generate(runner, [9], 4)
    assert result.tokens == eager_greedy([9], 4)
    assert {s.phase for s in result.steps} == {"decode"}


def test_generate_fills_exactly_the_context_and_no_more(tiny_llm_bundle: Path) -> None:
    """The last new token is never fed back, so prompt + N - 1 positions may fill the whole
    context (640): the last call writes position 639; one more token is refused."""
    runner = Runner.open(tiny_llm_bundle)
    result = generate(runner, [1, 2], 639)
    assert len(result.tokens) == 639
    assert sum(step.seq for step in result.steps[:-1]) == 639  # where the last call writes
    with pytest.raises(GenerateContractError, match="exceeds the context of 640"):
        generate(runner, [1, 2], 640)


def test_generate_cli_json(tiny_llm_bundle: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = host_main(
        [
            "generate",
            str(tiny_llm_bundle),
            "--prompt-ids",
            "1,2,3",
            "--max-new-tokens",
            "5",
            "--json",
        ]
    )
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    assert report["tokens"] == eager_greedy([1, 2, 3], 5)
    assert report["mode"] == "emulated"
    assert len(report["steps"]) == 5


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--prompt-ids", "1,x"], "expected comma-separated token ids"),
        (["--prompt-ids", "1,300"], "outside the vocabulary [0, 256)"),
        (["--prompt-ids", "1", "--max-new-tokens", "700"], "exceeds the context of 640"),
    ],
)
def test_generate_bad_arguments_exit_2(
    tiny_llm_bundle: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    assert host_main(["generate", str(tiny_llm_bundle), *argv]) == 2
    assert message in capsys.readouterr().err


def test_generate_refuses_a_bundle_without_the_contract(llm_like_bundle: Path) -> None:
    with pytest.raises(GenerateContractError, match="declares no generation contract"):
        generate(Runner.open(llm_like_bundle), [1, 2], 2)


def test_the_contract_is_declared_in_bundle_json(tiny_llm_bundle: Path) -> None:
    """The manifest's `runtime.generation: tiny_llm` names the roles in bundle.json; readers
    take them from there (issue 20, point 3)."""
    doc = json.loads((tiny_llm_bundle / "bundle.json").read_text())
    assert doc["generation"] == {
        "version": 1,
        "contract": "tiny_llm",
        "tokens": "input_ids",
        "start_position": "start_pos",
        "logits": doc["io"]["outputs"][0]["name"],
    }


def test_a_bundle_without_the_declaration_is_refused_by_generate(
    tiny_llm_bundle: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same program and files, bundle.json without `generation`: input names alone no
    longer make a contract."""
    copy = tmp_path / "undeclared"
    shutil.copytree(tiny_llm_bundle, copy)
    doc = json.loads((copy / "bundle.json").read_text())
    del doc["generation"]
    (copy / "bundle.json").write_text(json.dumps(doc))
    (copy / "bundle.sig").unlink(missing_ok=True)
    assert host_main(["generate", str(copy), "--prompt-ids", "1,2"]) == 2
    err = capsys.readouterr().err
    assert f"{copy}/bundle.json: the bundle declares no generation contract" in err
    assert "generation: tiny_llm" in err and "Traceback" not in err
