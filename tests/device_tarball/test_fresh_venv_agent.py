"""A device with nothing but `trt-edge-runner[agent]` and the runner tarball: install, health,
run, rollback work, and torch, executorch and numpy are not there to be imported.

A fresh venv (agent_venv.py: `python -m venv`, no system site-packages, PYTHONPATH
cleared) gets the device package as a wheel built from this checkout plus its
`[agent]` extra from a local wheelhouse, installed with `--no-index`. Bundles run in
`bin/trt-edge-run` of the unpacked x86_64 device tarball. Every agent command the
fleet uses runs from that venv: if any of them imported torch, executorch or numpy,
it would fail here. The venv is made once per session, twice: with the host's Python and
with Python 3.10, the one JetPack 6 ships (`find_python310`: skipped, saying so, on a
machine without one), so what a device runs is run on 3.10, not only type-checked for it.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.device_tarball.agent_venv import AgentVenv, find_python310, make_agent_venv, run
from tests.device_tarball.unpacked import DeviceRunner
from tests.helpers.fixtures_bundles import Bundles

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("device_tarball")]

HEAVY = ("torch", "executorch", "numpy")


@pytest.fixture(scope="session", params=["host-python", "python3.10"])
def agent_venv(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AgentVenv:
    if request.param == "host-python":
        return make_agent_venv(tmp_path_factory.mktemp("agent-venv"))
    python = find_python310()
    if python is None:
        pytest.skip("no Python 3.10 interpreter here (set TRT_EDGE_PYTHON310 to one)")
    venv = make_agent_venv(tmp_path_factory.mktemp("agent-venv-310"), python)
    version = run(venv.python, "-c", "import sys; print(sys.version_info[:2])")
    assert version.stdout.strip() == "(3, 10)", version.stdout + version.stderr
    return venv


def test_the_agent_venv_holds_the_agent_and_cryptography_only(agent_venv: AgentVenv) -> None:
    """What a device installs: trt-edge-runner + cryptography (+ cffi, pycparser, and on
    Python 3.10 typing_extensions), and the venv's own pip/setuptools. The list is printed
    for the record (pytest -s)."""
    listed = ", ".join(f"{k} {v}" for k, v in sorted(agent_venv.packages.items()))
    print(f"fresh agent venv: {listed}")
    expected = {"trt-edge-runner", "cryptography", "cffi", "pycparser"}
    version = run(agent_venv.python, "-c", "import sys; print(sys.version_info < (3, 11))")
    if (
        version.stdout.strip() == "True"
    ):  # cryptography needs it below 3.11 (JetPack 6's lock has it)
        expected.add("typing_extensions")
    assert {
        name.replace("-", "_") for name in set(agent_venv.packages) - {"pip", "setuptools"}
    } == {name.replace("-", "_") for name in expected}
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
