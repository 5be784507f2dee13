"""A real fleet: five containers of the `cpu-runtime` device image reached over real SSH by
`ansible-playbook`, one of them configured (device.json) with a latency budget it cannot meet.

Asserts the waves, the rollback of the failing device, the halt before the next
wave, that untouched devices still run the old version, and that a device whose
fingerprint does not match is skipped without being contacted.
"""

from __future__ import annotations

import io
import json
import subprocess
import tarfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from trt_edge.cli.main import main

from tests.fleet.rollout_cli import rollout
from tests.helpers.fixtures_bundles import Bundles

if TYPE_CHECKING:
    from docker import DockerClient

pytestmark = [pytest.mark.docker, pytest.mark.slow]

DEVICES = ("dev1", "dev2", "dev3", "dev4", "dev5")
FAILING = "dev2"


@dataclass
class Fleet:
    containers: dict[str, Any]
    ips: dict[str, str]
    key: Path  # the SSH private key that reaches every device

    def inventory(self, path: Path, group: str = "edge") -> Path:
        """An Ansible inventory of the fleet's devices (JSON is YAML), in `group`."""
        path.write_text(json.dumps({group: {"hosts": self.hosts()}}))
        return path

    def hosts(self) -> dict[str, dict[str, Any]]:
        ssh = "-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o ConnectTimeout=20"
        return {
            name: {
                "ansible_host": self.ips[name],
                "ansible_user": "root",
                "ansible_connection": "ssh",
                "ansible_ssh_private_key_file": str(self.key),
                "ansible_ssh_common_args": ssh,
                "ansible_python_interpreter": "/usr/bin/python3",
                "trt_edge_facts": {"arch": "x86_64"},
            }
            for name in self.containers
        }


def put_file(container: Any, path: str, data: bytes, mode: int = 0o644) -> None:
    """Copy bytes into a container through the Docker API (a tar stream)."""
    directory, name = path.rsplit("/", 1)
    container.exec_run(["mkdir", "-p", directory], user="root")
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        info = tarfile.TarInfo(name)
        info.size = len(data)
        info.mode = mode
        tar.addfile(info, io.BytesIO(data))
    assert container.put_archive(directory, buffer.getvalue())


def device_status(container: Any) -> dict[str, Any]:
    code, out = container.exec_run(["trt-edge-device", "status", "--json"])
    assert code == 0, out.decode()
    doc: dict[str, Any] = json.loads(out.decode().strip().splitlines()[-1])
    return doc


@contextmanager
def running_fleet(
    docker_client: DockerClient, image: str, names: tuple[str, ...], tmp_path: Path
) -> Iterator[Fleet]:
    """`names` devices of `image` on their own network, reachable over SSH; removed after."""
    key = tmp_path / "id_ed25519"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    tag = uuid.uuid4().hex[:8]
    network = docker_client.networks.create(f"trt-edge-fleet-{tag}", driver="bridge")
    containers: dict[str, Any] = {}
    try:
        for name in names:
            containers[name] = docker_client.containers.run(
                image,
                ["sshd"],  # a device for fleet tooling: sshd only (the default is the service)
                name=f"trt-edge-{name}-{tag}",
                detach=True,
                network=network.name,
                environment={"SSH_AUTHORIZED_KEYS": key.with_suffix(".pub").read_text()},
                mem_limit="1g",
            )
        ips = {}
        for name, container in containers.items():
            container.reload()
            ips[name] = container.attrs["NetworkSettings"]["Networks"][network.name]["IPAddress"]
        yield Fleet(containers, ips, key)
    finally:
        for container in containers.values():
            container.remove(force=True)
        network.remove()


def install_on(container: Any, tar: Path, public_key: bytes) -> None:
    """Trust `public_key` and install `tar` directly on the device (the fleet's start)."""
    put_file(container, "/etc/trt-edge/keys/publisher.pub", public_key)
    put_file(container, f"/var/tmp/{tar.name}", tar.read_bytes())
    code, out = container.exec_run(["trt-edge-device", "install", f"/var/tmp/{tar.name}"])
    assert code == 0, out.decode()


@pytest.fixture
def fleet(
    docker_client: DockerClient, runtime_image: str, agent_bundles: Bundles, tmp_path: Path
) -> Iterator[Fleet]:
    public = (agent_bundles.keys / "publisher.pub").read_bytes()
    with running_fleet(docker_client, runtime_image, DEVICES, tmp_path) as fleet:
        for name, container in fleet.containers.items():
            if name == FAILING:
                # This device's operator demands 0.0001 ms per phase: no model meets it.
                budget = {"health": {"latency_budget_ms": 0.0001}}
                put_file(container, "/etc/trt-edge/device.json", json.dumps(budget).encode())
            install_on(container, agent_bundles.v1, public)
            assert device_status(container)["version"] == "1.0.0"
        yield fleet


def test_rollout_halts_after_the_failing_wave_and_rolls_the_device_back(
    fleet: Fleet, agent_bundles: Bundles, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hosts: dict[str, Any] = fleet.hosts()
    # Never contacted: its address is TEST-NET-3 and its target is a Jetson.
    hosts["orin7"] = {"ansible_host": "203.0.113.7", "trt_edge_target": "jetson-orin-nano-jp6"}
    inventory = tmp_path / "inventory.yml"
    inventory.write_text(json.dumps({"edge": {"hosts": hosts}}))
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        f"bundle: {agent_bundles.v2}\n"
        "groups: [edge]\n"
        "waves: [1, '60%', '100%']\n"  # 5 devices: dev1 | dev2 dev3 | dev4 dev5
        # A 0.1 ms model on a shared 2-core machine running five devices: latency vs
        # baseline is noise here, so the regression gate is wide open; what fails dev2
        # is its own device setting (latency budget). The regression gate is tested in
        # tests/agent.
        "health: {max_latency_regression: 100000.0, runs: 2}\n"
        "failure_threshold: 0\n"
        "on_halt: rollback_wave\n"
    )
    report_path = tmp_path / "report.json"
    code = rollout(plan, inventory, "--workdir", tmp_path / "work", "--report", report_path)
    out = capsys.readouterr().out
    assert code == 1, out
    report = json.loads(report_path.read_text())
    logs = "\n".join(p.read_text() for p in sorted((tmp_path / "work").glob("wave-*.log")))
    assert report["waves"] == [["dev1"], ["dev2", "dev3"], ["dev4", "dev5"]], logs
    assert report["waves_run"] == 2 and report["halted"], logs
    devices = {d["host"]: d for d in report["devices"]}

    assert devices["dev1"]["result"] == "updated", logs
    assert (devices["dev1"]["old_version"], devices["dev1"]["new_version"]) == ("1.0.0", "2.0.0")
    assert devices["dev1"]["install_seconds"] > 0 and devices["dev1"]["health_seconds"] > 0

    assert devices[FAILING]["result"] == "rolled_back", logs
    assert "latency budget 0.0001 ms" in devices[FAILING]["reason"]
    assert devices[FAILING]["new_version"] == "1.0.0"

    # dev3 passed its gate in the failing wave; the halt rolls the whole wave back.
    assert devices["dev3"]["result"] == "rolled_back", logs
    assert devices["dev3"]["reason"] == "wave 2 rolled back after the halt"
    assert devices["dev3"]["new_version"] == "1.0.0"

    for name in ("dev4", "dev5"):
        assert devices[name]["result"] == "not_attempted"
        assert "failure threshold 0" in devices[name]["reason"]

    assert devices["orin7"]["result"] == "skipped"
    assert "fingerprint mismatch" in devices["orin7"]["reason"]

    # What the devices themselves say.
    assert device_status(fleet.containers["dev1"])["version"] == "2.0.0"
    for name in (FAILING, "dev3"):
        back = device_status(fleet.containers[name])
        assert (back["version"], back["previous_version"]) == ("1.0.0", "2.0.0")
    for name in ("dev4", "dev5"):
        status = device_status(fleet.containers[name])
        assert (status["version"], status["previous"]) == ("1.0.0", None)
        never_copied = fleet.containers[name].exec_run(["test", "-e", "/var/tmp/trt-edge"])
        assert never_copied.exit_code != 0
    # The old model still runs on an untouched device. Its every phase must run; the
    # latency gate is opened wide because a 0.1 ms model's latency on a shared 2-core
    # machine running five devices is noise (the gate itself is tested in tests/agent).
    code, health = fleet.containers["dev4"].exec_run(
        ["trt-edge-device", "health", "--json", "--max-regression", "100000"]
    )
    assert code == 0, health.decode()
    health_report = json.loads(health)
    assert health_report["version"] == "1.0.0"
    assert sorted(p["phase"] for p in health_report["phases"]) == ["decode", "prefill"]
    assert "rollout tiny 2.0.0" in out and "HALTED" in out


def _rollout(
    plan: Path, inventory: Path, workdir: Path, report: Path
) -> tuple[int, dict[str, Any]]:
    code = main(
        [
            "rollout",
            str(plan),
            "--inventory",
            str(inventory),
            "--workdir",
            str(workdir),
            "--report",
            str(report),
        ]
    )
    doc: dict[str, Any] = json.loads(report.read_text())
    return code, {d["host"]: d for d in doc["devices"]}


def test_rollouts_refuse_a_downgrade_allow_it_on_purpose_and_move_the_fleet_to_a_new_key(
    docker_client: DockerClient, runtime_image: str, agent_bundles: Bundles, tmp_path: Path
) -> None:
    """Three rollouts over two devices that run 2.0.0: a plain rollout of 1.0.0 is refused
    by every device (anti-rollback), `allow_downgrade: true` installs it and each device
    records it, and a plan whose `trust:` carries a rotation statement ships 3.0.0 signed
    by the new key, which the devices accept only through that statement."""
    public = (agent_bundles.keys / "publisher.pub").read_bytes()
    gate = "health: {max_latency_regression: 100000.0, runs: 1}\n"  # latency here is noise
    with running_fleet(docker_client, runtime_image, ("pc1", "pc2"), tmp_path) as fleet:
        for container in fleet.containers.values():
            install_on(container, agent_bundles.v2, public)
        inventory = fleet.inventory(tmp_path / "inventory.yml")

        plan = tmp_path / "downgrade.yaml"
        plan.write_text(f"bundle: {agent_bundles.v1}\ngroups: [edge]\n{gate}")
        code, devices = _rollout(plan, inventory, tmp_path / "w1", tmp_path / "r1.json")
        assert code == 1
        for name in ("pc1", "pc2"):
            assert devices[name]["result"] == "failed", devices[name]
            assert "install refused, previous model kept" in devices[name]["reason"]
            assert "tiny 1.0.0 is older than 2.0.0" in devices[name]["reason"]
            assert device_status(fleet.containers[name])["version"] == "2.0.0"

        plan.write_text(plan.read_text() + "allow_downgrade: true\n")
        code, devices = _rollout(plan, inventory, tmp_path / "w2", tmp_path / "r2.json")
        assert code == 0, devices
        for name in ("pc1", "pc2"):
            status = device_status(fleet.containers[name])
            assert (status["version"], status["floors"]["tiny"]["version"]) == ("1.0.0", "2.0.0")
            assert status["history"][-1]["action"] == "downgrade"

        host_keys = tmp_path / "host-keys"
        host_keys.mkdir()
        assert (
            main(
                [
                    "keys",
                    "rotate",
                    "--current",
                    str(agent_bundles.key),
                    "--new",
                    str(host_keys / "next"),
                ]
            )
            == 0
        )
        by_new = agent_bundles.make(tmp_path / "v3", "3.0.0", key=host_keys / "next.key")
        plan = tmp_path / "rotate.yaml"
        plan.write_text(
            f"bundle: {by_new}\ngroups: [edge]\n{gate}trust: [{host_keys / 'next.rotation.json'}]\n"
        )
        code, devices = _rollout(plan, inventory, tmp_path / "w3", tmp_path / "r3.json")
        assert code == 0, devices
        for name in ("pc1", "pc2"):
            assert devices[name]["result"] == "updated"
            assert device_status(fleet.containers[name])["version"] == "3.0.0"
            code, out = fleet.containers[name].exec_run(
                ["trt-edge-device", "trust", "status", "--json"]
            )
            states = {r["status"] for r in json.loads(out.decode().splitlines()[-1])["keys"]}
            assert code == 0 and states == {"trusted", "retired"}
