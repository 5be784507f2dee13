"""Fleets behind NAT, end to end: a real registry and a real broker on the operator's side,
devices each in an outbound-only network namespace running the real `follow` and `mqtt`
programs, and `trt-edge fleet rollout` between them. One device fails its health gate on
purpose; the wave it is in is rolled back and nothing after it moves. A device that was
offline through the rollout catches up to the channel in one poll when it comes back."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from trt_edge_runner.link.desired import read_desired

from tests.helpers.fixtures_bundles import Bundles
from tests.helpers.nat_fleet import NatDevice, nat_device, promote, publish, service_address
from tests.helpers.netns import outbound_only_hosts, require_namespaces
from tests.helpers.registry import OciRegistry, registry_binary, running_registry
from tests.helpers.waits import wait_until
from tests.pull.broker import FLEET, Broker, start_broker

pytestmark = [pytest.mark.xdist_group("netns"), pytest.mark.slow]

NAMES = ("n1", "n2", "n3", "n4")  # n3 fails its health gate; n4 is offline during the rollout
REPO = "fleet/tiny"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[OciRegistry, Broker]]:
    require_namespaces()
    binary = registry_binary()
    if binary is None:
        pytest.skip("docker-registry is not installed")
    work = tmp_path_factory.mktemp("nat-site")
    with (
        service_address() as address,
        running_registry(binary, work / "registry", address=address) as registry,
    ):
        broker = start_broker(work / "broker", NAMES, address)
        try:
            yield registry, broker
        finally:
            broker.stop()


def _version(device: NatDevice) -> object:
    return device.status().get("version")


def _wait_version(device: NatDevice, version: str) -> None:
    """Until the device's agent runs `version` (its follower installs it on a poll)."""

    def running() -> bool:
        return _version(device) == version

    wait_until(running, f"{device.name} running {version}", context=lambda: _log(device))


def _wait_outcome(device: NatDevice, outcome: str) -> None:
    """Until the device's follower recorded `outcome` for its last poll."""

    def recorded() -> bool:
        return device.follower_state().get("outcome") == outcome

    wait_until(recorded, f"{device.name}'s follower: {outcome}", context=lambda: _log(device))


def _log(device: NatDevice) -> str:
    return device.follower_log.read_text()[-2000:] if device.follower_log.exists() else ""


def test_a_staged_rollout_over_namespaced_devices(
    site: tuple[OciRegistry, Broker], agent_bundles: Bundles, trt_edge_run: Path, tmp_path: Path
) -> None:
    registry, broker = site
    v1, v2 = agent_bundles.v1.with_suffix(""), agent_bundles.v2.with_suffix("")
    publish(v1, registry.ref(REPO, "1.0.0"), "stable")
    publish(v2, registry.ref(REPO, "2.0.0"))
    channel = registry.ref(REPO, "stable")
    with outbound_only_hosts(len(NAMES), first_index=211) as hosts:
        devices = {
            name: nat_device(
                name,
                host,
                tmp_path / name,
                agent_bundles.keys,
                trt_edge_run,
                latency_budget_ms=1e-6 if name == "n3" else None,
            )
            for name, host in zip(NAMES, hosts, strict=True)
        }
        try:
            for device in devices.values():
                device.start_follower(channel)
            for device in devices.values():  # every device takes 1.0.0 from the channel
                _wait_version(device, "1.0.0")
                device.start_link(broker)
            devices["n4"].stop_follower()  # n4 goes offline for the channel

            plan = tmp_path / "plan.yaml"
            plan.write_text(  # `bundle` is the SSH rollout's; a pull rollout names --reference
                "bundle: tiny-2.0.0.tar\nwaves: [1, '100%']\nfailure_threshold: 0\n"
                "on_halt: rollback_wave\n"
            )
            done = subprocess.run(
                [sys.executable, "-m", "trt_edge", "fleet", "rollout", str(plan),
                 *broker.flags("operator"), "--fleet", FLEET,
                 "--reference", registry.ref(REPO, "2.0.0"), "--version", "2.0.0",
                 "--device", "n1", "--device", "n2", "--device", "n3",
                 "--wave-timeout", "300", "--json"],
                capture_output=True, text=True, timeout=900, check=False,
            )  # fmt: skip
            assert done.returncode == 1, done.stdout + done.stderr
            report = json.loads(done.stdout)
            results = {d["host"]: d for d in report["devices"]}
            assert report["waves"] == [["n1"], ["n2", "n3"]]
            assert results["n1"]["result"] == "updated"  # the canary, through its follower
            assert results["n3"]["result"] == "rolled_back", results["n3"]
            assert "health check failed" in results["n3"]["reason"]
            assert report["halted"] is True
            # The halt rolls the whole wave back: n2 had updated, and goes back too.
            assert results["n2"]["result"] == "rolled_back", results["n2"]
            assert _version(devices["n1"]) == "2.0.0"
            assert _version(devices["n2"]) == _version(devices["n3"]) == "1.0.0"
            for name in ("n2", "n3"):  # held: the followers do not take 2.0.0 back
                assert read_desired(devices[name].agent.root).hold is True
                _wait_outcome(devices[name], "held")
                assert _version(devices[name]) == "1.0.0"

            # The operator fixes what failed and releases 2.0.0 to the channel; n4 was away
            # for all of it and comes back: one poll, straight to the channel's bundle.
            promote(registry.ref(REPO, "2.0.0"), "stable")
            assert _version(devices["n4"]) == "1.0.0"
            devices["n4"].start_follower(channel)
            _wait_version(devices["n4"], "2.0.0")
            state = devices["n4"].follower_state()
            assert state["outcome"] in ("installed", "up_to_date")
        finally:
            for device in devices.values():
                device.stop()
