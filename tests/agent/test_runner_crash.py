"""A program that really crashes trt-edge-run: contained in the child, named, the old model kept.

The crashing bundle is found at test time (crashing_bundle.py: a deterministic search
over mutated programs, digests recomputed, then signed); the runner is the real
binary and it really dies of the signal — nothing here pretends to crash.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from trt_edge_runner.agent.install import install_bundle
from trt_edge_runner.agent.store import DeviceStore

from tests.agent.crashing_bundle import CrashingBundle, make_crashing_tar
from tests.agent.device import Device
from tests.helpers.fixtures_bundles import Bundles


def run_active_model(device: Device) -> str:
    """Every phase of whatever `current` points at, through `trt-edge-device run`."""
    version = ""
    for phase in ("decode", "prefill"):
        done = device.run("run", str(device.root / "current"), "--phase", phase, "--json")
        assert done.returncode == 0, done.stderr
        version = json.loads(done.stdout)["model"].split()[-1]
    return version


@pytest.fixture(scope="module")
def crashing(
    agent_bundles: Bundles, trt_edge_run: Path, tmp_path_factory: pytest.TempPathFactory
) -> CrashingBundle:
    pte = agent_bundles.v1.with_suffix("") / "model.pte"  # the directory v1's tar came from
    return make_crashing_tar(tmp_path_factory.mktemp("crash"), pte, agent_bundles.key, trt_edge_run)


def test_the_runner_dies_of_the_signal_and_says_where(
    crashing: CrashingBundle, trt_edge_run: Path
) -> None:
    done = subprocess.run(
        [str(trt_edge_run), "--bundle", str(crashing.directory), "--phases", "all", "--json"],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    signal_name = crashing.outcome.kind.removeprefix("crash:")
    assert done.returncode < 0, (done.returncode, done.stderr)  # the signal reaches the parent
    assert f"trt-edge-run: fatal: {signal_name} while {crashing.outcome.stage}" in done.stderr
    assert done.stdout == ""


def test_an_install_whose_smoke_run_crashes_keeps_the_previous_model_active(
    device: Device, agent_bundles: Bundles, crashing: CrashingBundle
) -> None:
    device.run("install", str(agent_bundles.v1), check=True)
    result = device.run("install", str(crashing.tar))
    signal_name = crashing.outcome.kind.removeprefix("crash:")
    assert result.returncode == 1, result.stderr
    assert (
        "smoke run of tiny 6.6.6-crash in slot B failed, previous model stays active: "
        f"trt-edge-run died of {signal_name} while {crashing.outcome.stage}"
    ) in result.stderr
    assert "Traceback" not in result.stderr
    status = device.status()
    assert status["version"] == "1.0.0" and status["active"] == "A"
    assert run_active_model(device) == "1.0.0"
    # The agent lived through it: the next install works.
    device.run("install", str(agent_bundles.v2), check=True)
    assert device.status()["version"] == "2.0.0"


def test_health_of_a_crashing_model_fails_the_gate_naming_the_signal(
    device: Device, crashing: CrashingBundle, agent_bundles: Bundles
) -> None:
    """A bundle staged without a smoke run (as `trt-edge flash` stages one) whose first run
    crashes: `health` reports a failed gate, exit 1, with the signal and the phase."""
    facts: dict[str, str | None] = {"arch": "x86_64"}
    install_bundle(DeviceStore(device.root), crashing.tar, agent_bundles.keys, facts, smoke=False)
    result = device.run("health", "--json")
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    signal_name = crashing.outcome.kind.removeprefix("crash:")
    assert not report["ok"] and report["version"] == "6.6.6-crash"
    assert f"trt-edge-run died of {signal_name} while {crashing.outcome.stage}" in report["reason"]
