"""Under TRT_EDGE_REQUIRE_DOCKER=1 (CI) a containers test that cannot run fails, not skips."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.helpers.paths import REPO

PROBE = """
from tests.helpers.fixtures_docker import skip_or_fail

def test_needs_a_tool() -> None:
    skip_or_fail("the probe tool is missing")
"""


def _run_probe(tmp_path: Path, required: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_probe.py").write_text(PROBE)
    env = {**os.environ, "TRT_EDGE_REQUIRE_DOCKER": required}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    command = [sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider"]
    command += ["-c", os.devnull, "--rootdir", str(tmp_path), str(tmp_path / "test_probe.py")]
    return subprocess.run(
        command,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        check=False,
    )


def test_required_docker_turns_a_skip_into_a_failure(tmp_path: Path) -> None:
    done = _run_probe(tmp_path, "1")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 failed" in done.stdout
    assert "TRT_EDGE_REQUIRE_DOCKER=1 but the probe tool is missing" in done.stdout


def test_without_the_requirement_it_is_a_skip_with_the_reason(tmp_path: Path) -> None:
    done = _run_probe(tmp_path, "")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 skipped" in done.stdout
    assert "the probe tool is missing" in done.stdout
