"""The README's quickstart, run as written from a clean shell.

The block is taken from README.md ("Quickstart"). Its first two lines set the machine up
(`make setup`, then activating `.venv`); the test checks they are exactly that and stands in for
them with the venv this session runs in — a test must not reinstall the shared venv. The rest
runs line for line under `bash -euo pipefail` in a scratch folder holding the checkout's
`examples/` (linked), with the stage cache the session's tiny-LLM bundle filled, so the build
reuses export and lowering and every later command runs on the bundle the quickstart built.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.docs.doc_blocks import README, bash, blocks, clean_env, run_as_written
from tests.helpers.paths import EXAMPLES
from tests.helpers.session_builds import fixture_cache_dir

pytestmark = [pytest.mark.slow]

SETUP = ["make setup", ". .venv/bin/activate"]


def quickstart() -> list[str]:
    """The lines of the one shell block under the README's "Quickstart" heading."""
    lines = README.read_text(encoding="utf-8").splitlines()
    start = lines.index("## Quickstart") + 1
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("## ")) + 1
    [block] = [b for b in blocks(README) if start < b.line < end]
    return [line for line in block.text.splitlines() if line.strip()]


def test_the_quickstart_is_ten_lines_that_start_with_setting_up() -> None:
    lines = quickstart()
    assert len(lines) <= 10, lines
    assert lines[:2] == SETUP
    assert all(line.startswith("trt-edge ") for line in lines[2:])


def test_the_quickstart_runs_as_written(tiny_llm_bundle: Path, tmp_path: Path) -> None:
    work = tmp_path / "checkout"
    work.mkdir()
    (work / "examples").symlink_to(EXAMPLES)
    env = clean_env(Path(sys.executable).parent, TRT_EDGE_CACHE=str(fixture_cache_dir()))
    script = "\n".join(quickstart()[len(SETUP) :]) + "\n"
    done = run_as_written(bash(script), work, env, timeout=1800)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out[-4000:]
    bundle = work / "dist" / "tiny-llm-0.1.0"
    assert (bundle / "model.pte").read_bytes() == (tiny_llm_bundle / "model.pte").read_bytes()
    assert "tiny-llm" in done.stdout and "prefill" in done.stdout and "decode" in done.stdout
