"""Finding the C++ runner, and a runner that cannot serve: each a clear error, nothing changed.

Discovery order: `--runner`, `$TRT_EDGE_RUNNER`, device.json `runner`, then PATH. The
binaries here are real: the x86_64 runner, a copy of it without the execute bit, an
aarch64 ELF (the cross toolchain's loader, which this machine cannot execute), and
`/bin/echo` — a real program that is not trt-edge-run and prints no JSON.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from trt_edge_runner.agent.config import RunnerSettings, find_runner
from trt_edge_runner.agent.errors import RunnerBroken, RunnerNotFound
from trt_edge_runner.agent.runner_process import RunnerProcess, elf_arch

from tests.agent.device import Device
from tests.helpers.fixtures_bundles import Bundles

AARCH64_ELF = Path("/usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1")


def without_runner(device: Device, path: str = "/usr/bin:/bin") -> dict[str, str]:
    """Environment with no $TRT_EDGE_RUNNER and a PATH that has no trt-edge-run."""
    return {"TRT_EDGE_RUNNER": "", "PATH": path}


def test_no_runner_anywhere_names_every_place_looked(
    device: Device, agent_bundles: Bundles
) -> None:
    result = device.run("install", str(agent_bundles.v1), extra_env=without_runner(device))
    assert result.returncode == 2, result.stderr
    err = result.stderr
    assert "trt-edge-run (the C++ runner that executes bundles) not found; looked at:" in err
    for place in (
        "--runner: not set",
        "$TRT_EDGE_RUNNER: not set",
        f"{device.config} runner: not set (no such file)",
        "PATH (/usr/bin:/bin): no trt-edge-run",
    ):
        assert place in err, err
    assert "hint: unpack the runner tarball" in err and "--engine python" in err
    assert "Traceback" not in err
    assert not (device.root / "state.json").exists()  # refused before anything changed


def test_each_place_is_used_in_order(device: Device, tmp_path: Path) -> None:
    on_path = tmp_path / "bin"
    on_path.mkdir()
    (on_path / "trt-edge-run").symlink_to(device.runner)
    env = {"PATH": str(on_path)}
    assert find_runner(None, device.config, RunnerSettings(), env).found_by == "PATH"
    from_config = RunnerSettings(runner=str(device.runner))
    assert find_runner(None, device.config, from_config, env).found_by == f"{device.config} runner"
    env["TRT_EDGE_RUNNER"] = str(device.runner)
    assert find_runner(None, device.config, from_config, env).found_by == "$TRT_EDGE_RUNNER"
    assert find_runner(device.runner, device.config, from_config, env).found_by == "--runner"


def test_a_named_runner_that_is_missing_is_refused_naming_the_place(
    device: Device, agent_bundles: Bundles, tmp_path: Path
) -> None:
    device.config.write_text(json.dumps({"runner": str(tmp_path / "nowhere" / "trt-edge-run")}))
    result = device.run("install", str(agent_bundles.v1), extra_env=without_runner(device))
    assert result.returncode == 2
    assert f"{device.config} runner names {tmp_path / 'nowhere' / 'trt-edge-run'}" in (
        result.stderr
    )
    assert "no such file" in result.stderr
    assert "(before it, --runner: not set; $TRT_EDGE_RUNNER: not set)" in result.stderr
    # A --runner that is not there is never silently replaced by $TRT_EDGE_RUNNER's.
    result = device.run("health", "--runner", str(tmp_path / "missing"))
    assert result.returncode == 1 and "no bundle is installed" in result.stderr
    device.run("install", str(agent_bundles.v1), check=True)
    result = device.run("health", "--runner", str(tmp_path / "missing"))
    assert result.returncode == 2 and f"--runner names {tmp_path / 'missing'}" in result.stderr


def test_a_runner_without_the_execute_bit_is_refused(
    device: Device, agent_bundles: Bundles, tmp_path: Path
) -> None:
    copy = tmp_path / "trt-edge-run"
    shutil.copyfile(device.runner, copy)
    copy.chmod(0o644)
    result = device.run("install", str(agent_bundles.v1), extra_env={"TRT_EDGE_RUNNER": str(copy)})
    assert result.returncode == 2
    assert f"$TRT_EDGE_RUNNER names {copy}, which cannot be used: is not executable" in (
        result.stderr
    )


def test_a_runner_for_another_architecture_is_named_as_such(
    device: Device, agent_bundles: Bundles, tmp_path: Path
) -> None:
    if not AARCH64_ELF.is_file():
        pytest.fail(f"{AARCH64_ELF} missing: run make sysdeps (g++-aarch64-linux-gnu)")
    foreign = tmp_path / "trt-edge-run"
    shutil.copyfile(AARCH64_ELF, foreign)
    foreign.chmod(0o755)
    assert elf_arch(foreign) == "aarch64" and elf_arch(device.runner) == os.uname().machine
    result = device.run("install", str(agent_bundles.v1), "--runner", str(foreign))
    assert result.returncode == 2, result.stderr
    assert f"trt-edge-run {foreign} (from --runner): exec format error" in result.stderr
    assert f"it is an aarch64 binary, this machine is {os.uname().machine}" in result.stderr
    assert device.status()["active"] is None


def test_a_program_that_is_not_the_runner_is_refused(
    device: Device, agent_bundles: Bundles
) -> None:
    echo = shutil.which("echo")
    assert echo is not None
    result = device.run("install", str(agent_bundles.v1), "--runner", echo)
    assert result.returncode == 2
    assert "exit 0 without a JSON document on stdout" in result.stderr
    assert "is this trt-edge-run?" in result.stderr


def test_a_runner_speaking_another_interface_is_refused(device: Device) -> None:
    """The interface check on a real runner's own document with its version changed."""
    found = find_runner(device.runner, device.config, RunnerSettings())
    runner = RunnerProcess.open(found, timeout_s=60)
    done = subprocess.run(
        [str(device.runner), "--version", "--json"], capture_output=True, text=True, check=True
    )
    doc = json.loads(done.stdout)
    doc["interface"] = 2
    future = subprocess.CompletedProcess(done.args, 0, json.dumps(doc), "")
    with pytest.raises(RunnerBroken, match="speaks interface 2, this agent reads 1"):
        runner._document(future, "answering --version")


def test_a_runner_past_its_time_limit_fails_health_and_is_killed(
    device: Device, agent_bundles: Bundles
) -> None:
    device.run("install", str(agent_bundles.v1), check=True)
    device.config.write_text(json.dumps({"runner_timeout_s": 0.001}))
    result = device.run("health", "--json")
    assert result.returncode == 1
    report = json.loads(result.stdout)
    assert not report["ok"] and report["engine"] == "cpp"
    assert "trt-edge-run did not finish within 0.001 s" in report["reason"]
    assert "runner_timeout_s" in report["reason"]


def test_python_engine_is_only_taken_when_asked(device: Device, agent_bundles: Bundles) -> None:
    """Without a runner, the agent does not fall back to the Python runtime on its own; with
    `--engine python` (where the runtime is installed, as here) it uses it."""
    env = without_runner(device, path=os.environ["PATH"].replace(str(device.runner.parent), ""))
    refused = device.run("install", str(agent_bundles.v1), extra_env=env)
    assert refused.returncode == 2 and "not found" in refused.stderr
    with pytest.raises(RunnerNotFound):
        find_runner(None, device.config, RunnerSettings(), env)
    installed = device.run("install", str(agent_bundles.v1), "--engine", "python", extra_env=env)
    assert installed.returncode == 0, installed.stderr
    device.config.write_text(json.dumps({"engine": "python"}))
    health = device.run("health", "--json", "--max-regression", "1000", extra_env=env)
    assert health.returncode == 0, health.stderr
    assert json.loads(health.stdout)["engine"] == "python"
