"""docs/fleet.md's "A rollout from a clean shell", run exactly as written.

The block after `<!-- readme-test: rollout -->` is taken from docs/fleet.md and run by bash
(`-euo pipefail`), line for line, in a scratch checkout (the repository's `examples/`
and `.venv` linked in) with a clean environment: no `TRT_EDGE_*` variables, no
activated venv — only `PATH`, `HOME` and, on a machine whose worktrees share one venv,
`PYTHONPATH`. Its `inventory.yml` (the one file the page expects the reader to have)
lists two `cpu-runtime` containers reached over real SSH. The page and this test
cannot drift: edit the block and this test runs the edit.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.docs.doc_blocks import bash, clean_env, marked_block, run_as_written
from tests.fleet.test_fleet_docker import device_status, running_fleet

if TYPE_CHECKING:
    from docker import DockerClient

pytestmark = [pytest.mark.docker, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "fleet.md"
MARK = "readme-test: rollout"


def readme_block() -> str:
    """The shell block right after the page's marker."""
    return marked_block(PAGE, MARK).text + "\n"


def test_the_page_block_is_commands_only() -> None:
    block = readme_block()
    lines = [line for line in block.splitlines() if line.strip()]
    assert not any(line.lstrip().startswith("#") for line in lines), "comments belong in prose"
    commands = [line.split()[0] for line in lines if not line.startswith((" ", "\t"))]
    assert {"trt-edge", "ansible"} <= set(commands), commands
    for step in ("build", "keys", "sign", "pack", "rollout"):
        assert any(line.startswith(f"trt-edge {step}") for line in lines), step
    assert "--dry-run" in block


def test_the_page_rollout_runs_from_a_clean_shell(
    docker_client: DockerClient, runtime_image: str, tmp_path: Path
) -> None:
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / "examples").symlink_to(REPO / "examples")
    (checkout / ".venv").symlink_to(Path(sys.executable).parent.parent)
    env = clean_env()
    with running_fleet(docker_client, runtime_image, ("edge1", "edge2"), tmp_path) as fleet:
        fleet.inventory(checkout / "inventory.yml")
        done = run_as_written(bash(readme_block()), checkout, env, timeout=3600)
        out = done.stdout + done.stderr
        assert done.returncode == 0, out[-6000:]
        assert "rollout tiny-llm 0.1.0 (dry run)" in out, out[-3000:]
        report = json.loads((checkout / "report.json").read_text())
        assert report["waves"] == [["edge1"], ["edge2"]] and not report["halted"], report
        for device in report["devices"]:
            assert device["result"] == "updated", device
            assert (device["old_version"], device["new_version"]) == (None, "0.1.0"), device
        for container in fleet.containers.values():
            status = device_status(container)
            assert (status["name"], status["version"]) == ("tiny-llm", "0.1.0")
            assert status["floors"]["tiny-llm"]["version"] == "0.1.0"
        assert (checkout / "dist" / "tiny-llm-0.1.0.tar").is_file()
