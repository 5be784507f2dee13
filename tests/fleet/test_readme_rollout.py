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
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.fleet.test_fleet_docker import device_status, running_fleet

if TYPE_CHECKING:
    from docker import DockerClient

pytestmark = [pytest.mark.docker, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "fleet.md"
MARK = "<!-- readme-test: rollout -->"


def readme_block() -> str:
    """The shell block right after the page's marker."""
    text = PAGE.read_text(encoding="utf-8")
    assert text.count(MARK) == 1, f"docs/fleet.md must hold {MARK!r} once"
    match = re.match(r"\s*```sh\n(.*?)\n```", text.split(MARK, 1)[1], re.DOTALL)
    assert match, f"no ```sh block right after {MARK!r} in docs/fleet.md"
    return match.group(1) + "\n"


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
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": os.environ.get("HOME", "/root")}
    if os.environ.get("PYTHONPATH"):
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    with running_fleet(docker_client, runtime_image, ("edge1", "edge2"), tmp_path) as fleet:
        fleet.inventory(checkout / "inventory.yml")
        done = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", readme_block()],
            cwd=checkout,
            env=env,
            capture_output=True,
            text=True,
            timeout=3600,
            check=False,
        )
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
