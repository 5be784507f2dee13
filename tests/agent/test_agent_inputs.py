"""Bad device-side input: an unusable --root, bad run counts, a broken device.json.

Each is refused with a message naming the file and the fix, never a traceback,
and `status`/`health` on a fresh device create nothing.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess

import pytest

from tests.agent.device import Device
from tests.helpers.fixtures_bundles import Bundles


def test_status_and_health_on_a_missing_root_report_nothing_and_create_nothing(
    device: Device,
) -> None:
    assert not device.root.exists()
    status = device.run("status", "--json")
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["active"] is None
    text = device.run("status")
    assert "nothing installed" in text.stdout
    health = device.run("health")
    assert health.returncode == 1 and "no bundle is installed" in health.stderr
    rollback = device.run("rollback")
    assert rollback.returncode == 1 and "nothing to roll back to" in rollback.stderr
    assert not device.root.exists()


@pytest.mark.parametrize("command", ["status", "health", "rollback", "install"])
def test_root_that_is_a_file_is_a_clear_error(
    device: Device, agent_bundles: Bundles, command: str
) -> None:
    device.root.write_text("not a directory")
    args = [command, str(agent_bundles.v1)] if command == "install" else [command]
    result = device.run(*args)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert f"{device.root}: cannot use this as the agent state directory" in result.stderr
    assert "--root" in result.stderr


def test_root_without_permission_is_a_clear_error(device: Device, agent_bundles: Bundles) -> None:
    """Root ignores directory permissions, so under root (as in CI) the agent runs without the
    capabilities that let it (setpriv drops them from its bounding set): the same refusal a
    device's service user meets on a directory it does not own."""
    device.root.mkdir(mode=0o500)
    command = device.cli("install", str(agent_bundles.v1))
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        assert setpriv is not None, "running as root without setpriv (util-linux)"
        drop = "-dac_override,-dac_read_search,-fowner"
        command = [setpriv, "--bounding-set", drop, "--", *command]
    try:
        result = subprocess.run(
            command, env=device.env(), capture_output=True, text=True, timeout=300, check=False
        )
    finally:
        device.root.chmod(0o700)
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert "cannot use this as the agent state directory" in result.stderr
    assert "Permission denied" in result.stderr
    assert sorted(p.name for p in device.root.iterdir()) == []


@pytest.mark.parametrize("value", ["0", "-1"])
def test_run_counts_below_one_are_usage_errors(
    device: Device, agent_bundles: Bundles, value: str
) -> None:
    install = device.run("install", str(agent_bundles.v1), "--smoke-runs", value)
    assert install.returncode == 2 and "at least 1" in install.stderr
    health = device.run("health", "--runs", value)
    assert health.returncode == 2 and "at least 1" in health.stderr
    assert not device.root.exists()


def test_install_rejects_a_broken_device_config(device: Device, agent_bundles: Bundles) -> None:
    device.config.write_text("{garbage")
    result = device.run("install", str(agent_bundles.v1))
    assert result.returncode == 2
    assert f"{device.config}:1:2: device config is not valid JSON" in result.stderr
    assert not (device.root / "state.json").exists()
    bad_value = dataclasses.replace(device, config=device.config.with_name("bad.json"))
    bad_value.config.write_text(json.dumps({"health": {"latency_budget_ms": "fast"}}))
    result = bad_value.run("install", str(agent_bundles.v1))
    assert result.returncode == 2 and "health.latency_budget_ms" in result.stderr
