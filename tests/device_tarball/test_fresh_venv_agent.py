"""A device with nothing but `trt-edge-runner[agent]` and the runner tarball: install, health,
run, rollback work, and torch, executorch and numpy are not there to be imported.

A fresh venv (`python -m venv`, no system site-packages, PYTHONPATH cleared) gets the
device package as a wheel built from this checkout plus its `[agent]` extra from a
local wheelhouse (`pip download` of the pinned cryptography, once per machine, in
~/.cache/trt-edge/tests/agent-wheelhouse), installed with `--no-index`. Bundles run in
`bin/trt-edge-run` of the unpacked x86_64 device tarball. Every agent command the
fleet uses runs from that venv: if any of them imported torch, executorch or numpy,
it would fail here. The venv is made once per session.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from agent.conftest import Bundles  # type: ignore[import-not-found]
from device_tarball.unpacked import DeviceRunner  # type: ignore[import-not-found]

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("device_tarball")]

REPO = Path(__file__).resolve().parents[2]
WHEELHOUSE = Path.home() / ".cache" / "trt-edge" / "tests" / "agent-wheelhouse"
HEAVY = ("torch", "executorch", "numpy")


def pinned(package: str) -> str:
    """`package==version` as requirements-dev.txt pins it (the host's stack)."""
    text = (REPO / "requirements-dev.txt").read_text(encoding="utf-8")
    match = re.search(rf"^{re.escape(package)}==(\S+)", text, re.M)
    assert match, f"requirements-dev.txt pins no {package}"
    return f"{package}=={match.group(1)}"


def run(*argv: str | Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(a) for a in argv], capture_output=True, text=True, check=False, timeout=900, env=env
    )


@dataclass(frozen=True)
class AgentVenv:
    root: Path
    packages: dict[str, str]  # what `pip list` says is installed

    @property
    def python(self) -> Path:
        return self.root / "bin" / "python"

    @property
    def device_cli(self) -> Path:
        return self.root / "bin" / "trt-edge-device"


@pytest.fixture(scope="session")
def agent_venv(tmp_path_factory: pytest.TempPathFactory) -> AgentVenv:
    work = tmp_path_factory.mktemp("agent-venv")
    # The device package from this checkout, built as a wheel in a copy (no build/ or
    # egg-info left in the tree).
    source = work / "device_runner"
    source.mkdir()
    shutil.copy(REPO / "device_runner" / "pyproject.toml", source)
    shutil.copytree(
        REPO / "device_runner" / "trt_edge_runner",
        source / "trt_edge_runner",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    wheels = work / "wheels"
    built = run(
        sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
        "--disable-pip-version-check", "-w", wheels, source,
    )  # fmt: skip
    assert built.returncode == 0, built.stdout + built.stderr
    if not any(WHEELHOUSE.glob("cryptography-*.whl")):
        fetched = run(
            sys.executable, "-m", "pip", "download", "--disable-pip-version-check",
            "--only-binary=:all:", pinned("cryptography"), "-d", WHEELHOUSE,
        )  # fmt: skip
        assert fetched.returncode == 0, fetched.stdout + fetched.stderr
    venv = work / "venv"
    base = getattr(sys, "_base_executable", sys.executable)
    made = run(base, "-m", "venv", venv)
    assert made.returncode == 0, made.stderr
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    installed = run(
        venv / "bin" / "pip", "install", "--disable-pip-version-check", "--no-index",
        "--find-links", wheels, "--find-links", WHEELHOUSE, "trt-edge-runner[agent]",
        env=clean,
    )  # fmt: skip
    assert installed.returncode == 0, installed.stdout + installed.stderr
    listed = run(venv / "bin" / "pip", "list", "--format", "json", env=clean)
    packages = {p["name"].lower(): p["version"] for p in json.loads(listed.stdout)}
    return AgentVenv(venv, packages)


def test_the_agent_venv_holds_the_agent_and_cryptography_only(agent_venv: AgentVenv) -> None:
    """What a device installs: trt-edge-runner + cryptography (+ cffi, pycparser), and the
    venv's own pip/setuptools. The list is printed for the record (pytest -s)."""
    listed = ", ".join(f"{k} {v}" for k, v in sorted(agent_venv.packages.items()))
    print(f"fresh agent venv: {listed}")
    assert set(agent_venv.packages) - {"pip", "setuptools"} == {
        "trt-edge-runner",
        "cryptography",
        "cffi",
        "pycparser",
    }
    clean = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    for module in HEAVY:
        probe = run(agent_venv.python, "-c", f"import {module}", env=clean)
        assert probe.returncode == 1 and "ModuleNotFoundError" in probe.stderr, module
    where = run(
        agent_venv.python,
        "-c",
        "import trt_edge_runner; print(trt_edge_runner.__file__)",
        env=clean,
    )
    assert str(agent_venv.root) in where.stdout  # the installed wheel, not this checkout


def test_install_health_run_rollback_from_the_fresh_venv(
    agent_venv: AgentVenv, x86_64_runner: DeviceRunner, agent_bundles: Bundles, tmp_path: Path
) -> None:
    facts = tmp_path / "facts.json"
    facts.write_text(json.dumps({"arch": "x86_64"}))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(
        TRT_EDGE_ROOT=str(tmp_path / "device"),
        TRT_EDGE_KEYS=str(agent_bundles.keys),
        TRT_EDGE_FACTS=str(facts),
        TRT_EDGE_CONFIG=str(tmp_path / "device.json"),
        # On PATH, as the runtime image and a flashed rootfs put it.
        PATH=f"{x86_64_runner.root / 'bin'}:{env['PATH']}",
    )

    def device(*args: str) -> subprocess.CompletedProcess[str]:
        return run(agent_venv.device_cli, *args, env=env)

    first = device("install", str(agent_bundles.v1), "--json")
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["version"] == "1.0.0"
    second = device("install", str(agent_bundles.v2), "--json")
    assert second.returncode == 0, second.stderr
    health = device("health", "--json", "--max-regression", "1000")
    assert health.returncode == 0, health.stderr
    report = json.loads(health.stdout)
    assert report["ok"] and report["version"] == "2.0.0" and report["engine"] == "cpp"
    ran = device("run", str(tmp_path / "device" / "current"), "--phase", "prefill", "--json")
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout)["runner"] == str(x86_64_runner.root / "bin" / "trt-edge-run")
    info = device("info", "--json")
    assert info.returncode == 0, info.stderr
    facts_doc = json.loads(info.stdout)["device"]
    assert facts_doc["runner"]["found_by"] == "PATH"
    assert all(facts_doc[m] is None for m in HEAVY)
    rolled = device("rollback", "--json")
    assert rolled.returncode == 0, rolled.stderr
    assert json.loads(rolled.stdout)["version"] == "1.0.0"
    assert json.loads(device("status", "--json").stdout)["version"] == "1.0.0"
    # The Python engine is an explicit opt-in, and this device does not have it.
    python = device("health", "--engine", "python")
    assert python.returncode == 1 and "Traceback" not in python.stderr
