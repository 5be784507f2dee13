"""The Hugging Face page's commands (docs/huggingface.md) work as written, in a copy of the example.

The commands are read from the page's marked code block, so the page cannot drift
from what works. The build finds the stage cache the example's session bundle filled
(same folder bytes: the writer is deterministic), so it re-uses export and lowering.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from tests.docs.doc_blocks import marked_block, run_as_written
from tests.helpers.session_builds import fixture_cache_dir
from tests.llm.llm_folders import EXAMPLE, REPO

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("llm-gemma3-example")]

MARKER = "commands: huggingface"


PAGE = REPO / "docs" / "huggingface.md"


def readme_commands() -> list[list[str]]:
    return marked_block(PAGE, MARKER).commands()


def test_the_page_shows_five_commands_after_changing_into_the_example() -> None:
    commands = readme_commands()
    assert commands[0] == ["cd", "examples/gemma3"]
    assert len(commands[1:]) == 5
    assert [c[0] for c in commands[1:]] == ["python"] + ["trt-edge"] * 4


def test_the_page_commands_run_as_written(gemma3_example_bundle: Path, tmp_path: Path) -> None:
    commands = readme_commands()
    work = tmp_path / Path(commands[0][1]).name
    assert (REPO / commands[0][1]).resolve() == EXAMPLE
    shutil.copytree(
        EXAMPLE, work, ignore=shutil.ignore_patterns("mini-gemma3", "dist", "__pycache__")
    )
    env = {**os.environ, "TRT_EDGE_CACHE": str(fixture_cache_dir())}
    outputs = []
    for command in commands[1:]:
        program = [sys.executable] if command[0] == "python" else [sys.executable, "-m", "trt_edge"]
        done = run_as_written([*program, *command[1:]], work, env, timeout=1800)
        assert done.returncode == 0, (command, done.stderr[-2000:])
        outputs.append(done)
    _, validated, built, generated, benched = outputs
    assert (work / "mini-gemma3" / "model.safetensors").is_file()
    assert "valid: mini-gemma3 0.1.0" in validated.stdout
    assert (work / "dist" / "mini-gemma3-0.1.0" / "tokenizer.json").is_file()
    assert "profile 1 prefill: parity ok" in built.stdout
    assert generated.stdout.strip() and "stop:" in generated.stderr
    assert "decode" in benched.stdout and "prefill" in benched.stdout
