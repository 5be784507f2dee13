"""Anti-rollback through the real device CLI: per model, a device never installs a version
below the highest it has had, nor that version with other content, unless told so
(`--allow-downgrade`, recorded in the state's history); `rollback` stays possible and
does not lower the floor."""

from __future__ import annotations

import json
from pathlib import Path

from trt_edge_runner.agent.store import AgentState, DeviceStore

from tests.agent.device import Device
from tests.agent.test_agent import run_active_model
from tests.helpers.fixtures_bundles import Bundles


def status(device: Device) -> dict[str, object]:
    doc: dict[str, object] = device.status()
    return doc


def floor_of(device: Device, name: str = "tiny") -> str:
    floors = device.status()["floors"]
    assert isinstance(floors, dict)
    version: str = floors[name]["version"]
    return version


def test_a_lower_version_is_refused_naming_both_versions(
    device: Device, agent_bundles: Bundles
) -> None:
    device.run("install", str(agent_bundles.v2), check=True)
    refused = device.run("install", str(agent_bundles.v1))
    assert refused.returncode == 1, refused.stderr
    assert "Traceback" not in refused.stderr
    assert (
        "refused: tiny 1.0.0 is older than 2.0.0, the highest version of tiny this device has "
        "installed (anti-rollback)"
    ) in refused.stderr
    assert "--allow-downgrade" in refused.stderr  # the hint says how to do it on purpose
    assert status(device)["version"] == "2.0.0"
    assert run_active_model(device) == "2.0.0"
    assert list((device.root / "staging").iterdir()) == []


def test_allow_downgrade_installs_records_it_and_keeps_the_floor(
    device: Device, agent_bundles: Bundles
) -> None:
    device.run("install", str(agent_bundles.v2), check=True)
    done = device.run("install", str(agent_bundles.v1), "--allow-downgrade", "--json", check=True)
    doc = json.loads(done.stdout)
    assert doc["version"] == "1.0.0" and doc["floor"] == "2.0.0"
    assert "older than 2.0.0" in doc["downgrade"]
    after = status(device)
    assert after["version"] == "1.0.0" and floor_of(device) == "2.0.0"
    history = after["history"]
    assert isinstance(history, list)
    assert [e["action"] for e in history] == ["install", "downgrade"]
    assert history[-1]["version"] == "1.0.0" and "--allow-downgrade" in history[-1]["detail"]
    assert run_active_model(device) == "1.0.0"
    # The floor did not move: the next plain install of 1.0.0 is still a downgrade.
    assert device.run("install", str(agent_bundles.v1)).returncode == 1
    # ... and 2.0.0 (the floor, same content) installs without the flag.
    device.run("install", str(agent_bundles.v2), check=True)


def test_the_same_version_with_other_content_is_refused(
    device: Device, agent_bundles: Bundles
) -> None:
    device.run("install", str(agent_bundles.v2), check=True)
    refused = device.run("install", str(agent_bundles.v2_rebuilt))
    assert refused.returncode == 1
    assert (
        "tiny 2.0.0 is the version this device already installed (2.0.0), with other content: "
        "bundle.json sha256"
    ) in refused.stderr
    assert "(anti-rollback)" in refused.stderr
    # The same bytes again are fine (a re-install, e.g. on the other slot).
    device.run("install", str(agent_bundles.v2), check=True)
    # On purpose, the floor's content becomes the rebuilt one; the old one is then refused.
    device.run("install", str(agent_bundles.v2_rebuilt), "--allow-downgrade", check=True)
    assert device.run("install", str(agent_bundles.v2)).returncode == 1
    assert floor_of(device) == "2.0.0"


def test_rollback_is_allowed_and_does_not_lower_the_floor(
    device: Device, agent_bundles: Bundles
) -> None:
    device.run("install", str(agent_bundles.v1), check=True)
    device.run("install", str(agent_bundles.v2), check=True)
    device.run("rollback", check=True)
    after = status(device)
    assert after["version"] == "1.0.0" and floor_of(device) == "2.0.0"
    history = after["history"]
    assert isinstance(history, list)
    assert history[-1]["action"] == "rollback" and "floor stays 2.0.0" in history[-1]["detail"]
    assert run_active_model(device) == "1.0.0"
    # Going forward again by install: 2.0.0 is the floor with its own content, so allowed.
    device.run("install", str(agent_bundles.v2), check=True)
    assert status(device)["version"] == "2.0.0"


def test_a_version_devices_cannot_order_is_refused(
    device: Device, agent_bundles: Bundles, tmp_path: Path
) -> None:
    odd = agent_bundles.make(tmp_path / "odd", "2024-05-build7", checked=False)
    refused = device.run("install", str(odd), "--allow-downgrade")
    assert refused.returncode == 1
    assert "'2024-05-build7' is not a version a device can order" in refused.stderr
    assert "MAJOR.MINOR.PATCH" in refused.stderr
    assert status(device)["active"] is None


def test_a_pre_release_is_below_its_release(
    device: Device, agent_bundles: Bundles, tmp_path: Path
) -> None:
    device.run("install", str(agent_bundles.v2), check=True)
    rc = agent_bundles.make(tmp_path / "rc", "2.0.0-rc.1")
    refused = device.run("install", str(rc))
    assert refused.returncode == 1 and "tiny 2.0.0-rc.1 is older than 2.0.0" in refused.stderr
    patch = agent_bundles.make(tmp_path / "patch", "2.0.1-rc.1")
    device.run("install", str(patch), check=True)
    assert floor_of(device) == "2.0.1-rc.1"


def test_a_state_written_before_floors_existed_gets_its_floor_from_its_slots(
    device: Device, agent_bundles: Bundles
) -> None:
    """An agent upgraded on a device whose state.json is schema 1: the floor starts at the
    highest version the slots hold, so the upgrade itself opens no rollback."""
    device.run("install", str(agent_bundles.v1), check=True)
    device.run("install", str(agent_bundles.v2), check=True)
    state_path = device.root / "state.json"
    doc = json.loads(state_path.read_text())
    for key in ("floors", "history", "trust"):
        del doc[key]
    for slot in doc["slots"].values():
        del slot["key_id"]
    doc["schema"] = 1
    state_path.write_text(json.dumps(doc))
    state: AgentState = DeviceStore(device.root).load()
    assert state.floors["tiny"].version == "2.0.0"
    device.run("rollback", check=True)  # to 1.0.0
    refused = device.run("install", str(agent_bundles.v1))
    assert refused.returncode == 1 and "older than 2.0.0" in refused.stderr
