"""The device agent driving the aarch64 runner (under qemu), as on a Jetson: a bundle built
for the Orin installs, is smoke-run and health-checked by the aarch64 trt-edge-run.

The runner is started through a two-line launcher that execs qemu-aarch64-static on the
unpacked tarball's real binary (binfmt_misc is not available here); what runs and
answers is the aarch64 runner itself — `--version` says so.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.device_tarball.unpacked import AARCH64_ROOT, QEMU, DeviceRunner
from tests.helpers.fixtures_bundles import Bundles

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("device_tarball")]

ORIN_FACTS = {
    "arch": "aarch64",
    "sm": "8.7",
    "jetpack": "6.2.1",
    "l4t": "36.4.3",
    "cuda": "12.6.68",
    "tensorrt": "10.3.0.30",
}


def launcher(runner: DeviceRunner, where: Path) -> Path:
    path = where / "trt-edge-run"
    binary = runner.root / "bin" / "trt-edge-run"
    path.write_text(
        "#!/bin/sh\n"
        f'LD_LIBRARY_PATH={runner.library_path} exec {QEMU} -L {AARCH64_ROOT} {binary} "$@"\n'
    )
    path.chmod(0o755)
    return path


def test_the_agent_installs_and_checks_an_orin_bundle_with_the_aarch64_runner(
    aarch64_runner: DeviceRunner, agent_bundles: Bundles, tmp_path: Path
) -> None:
    runner = launcher(aarch64_runner, tmp_path)
    facts = tmp_path / "facts.json"
    facts.write_text(json.dumps(ORIN_FACTS))
    env = {
        **os.environ,
        "TRT_EDGE_ROOT": str(tmp_path / "device"),
        "TRT_EDGE_KEYS": str(agent_bundles.keys),
        "TRT_EDGE_FACTS": str(facts),
        "TRT_EDGE_CONFIG": str(tmp_path / "device.json"),
        "TRT_EDGE_RUNNER": str(runner),
    }

    def agent(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "trt_edge_runner.device_cli", *args],
            env=env, capture_output=True, text=True, check=False, timeout=600,
        )  # fmt: skip

    info = agent("info", "--json")
    assert info.returncode == 0, info.stderr
    assert json.loads(info.stdout)["device"]["runner"]["arch"] == "aarch64"
    installed = agent("install", str(agent_bundles.orin), "--json")
    assert installed.returncode == 0, installed.stderr
    assert json.loads(installed.stdout)["version"] == "1.0.0-orin"
    health = agent("health", "--json", "--max-regression", "1000")
    assert health.returncode == 0, health.stderr
    assert [p["phase"] for p in json.loads(health.stdout)["phases"]] == ["decode", "prefill"]
    # The x86_64 bundle is refused by the aarch64 runner at the smoke run (facts say aarch64,
    # so only the runner's own arch check stands between it and the device).
    facts.write_text(json.dumps({"arch": "x86_64"}))
    refused = agent("install", str(agent_bundles.v1))
    assert refused.returncode == 1
    assert "built for x86_64" in refused.stderr and "runs aarch64 code" in refused.stderr
