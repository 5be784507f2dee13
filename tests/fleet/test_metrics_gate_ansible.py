"""The live-traffic gate end to end, without Docker: three "devices" on this machine reached by
`ansible-playbook` over its local connection, each a real device agent (its own root, the
real C++ runner) and a real `/metrics` endpoint (prometheus_client's HTTP server, with the
service's metric names) under steady traffic; one device's engine fails requests.

The plan, the playbooks, the scrapes (Ansible's uri module), the window and the rollbacks
are the real ones; only the service is a stand-in (the device service lives on another
branch)."""

from __future__ import annotations

import json
import re
import shlex
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from prometheus_client import start_http_server

from tests.agent.device import Device
from tests.fleet.rollout_cli import rollout
from tests.fleet.test_metrics_gate import Service
from tests.helpers.fixtures_bundles import Bundles

pytestmark = pytest.mark.slow


def device_cli(device: Device) -> str:
    """The device CLI as one command line with the device's locations in its environment."""
    env = {k: v for k, v in device.env().items() if k.startswith("TRT_EDGE_")}
    return shlex.join(["env", *(f"{k}={v}" for k, v in env.items()), *device.cli()])


@pytest.fixture
def traffic() -> Iterator[dict[str, int]]:
    """Each device's service metrics, served over HTTP, with requests arriving every 50 ms:
    dev1 and dev3 answer them all, dev2's engine fails one in four. Yields each device's port."""
    services = {"dev1": Service(), "dev2": Service(), "dev3": Service()}
    servers = [start_http_server(0, "127.0.0.1", s.registry) for s in services.values()]
    stop = threading.Event()

    def serve() -> None:
        while not stop.wait(0.05):
            for healthy in ("dev1", "dev3"):
                services[healthy].serve("ok", 4)
                services[healthy].ttft.observe(0.02)
            services["dev2"].serve("ok", 3)
            services["dev2"].serve("engine_error", 1)

    worker = threading.Thread(target=serve, daemon=True)
    worker.start()
    try:
        yield {
            name: server.server_port for name, (server, _) in zip(services, servers, strict=True)
        }
    finally:
        stop.set()
        worker.join()
        for server, thread in servers:
            server.shutdown()
            server.server_close()
            thread.join()


def test_a_device_failing_live_requests_is_rolled_back_and_halts_the_rollout(
    tmp_path: Path,
    agent_bundles: Bundles,
    trt_edge_run: Path,
    traffic: dict[str, int],
    capsys: pytest.CaptureFixture[str],
) -> None:
    hosts = {}
    devices = {}
    for name, port in traffic.items():
        facts = tmp_path / f"{name}-facts.json"
        facts.write_text(json.dumps({"arch": "x86_64"}))
        device = Device(
            tmp_path / name, agent_bundles.keys, facts, tmp_path / f"{name}.json", trt_edge_run
        )
        device.run("install", str(agent_bundles.v1), check=True)
        devices[name] = device
        hosts[name] = {
            "ansible_connection": "local",
            "ansible_python_interpreter": sys.executable,
            "trt_edge_facts": {"arch": "x86_64"},
            "trt_edge_test_cli": device_cli(device),
            "trt_edge_metrics_url": f"http://127.0.0.1:{port}/metrics",
        }
    inventory = tmp_path / "inventory.yml"
    inventory.write_text(json.dumps({"edge": {"hosts": hosts}}))
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        f"bundle: {agent_bundles.v2}\n"
        "groups: [edge]\n"
        "waves: [1, 3]\n"  # dev1 | dev2 dev3
        "device_cli: '{{ trt_edge_test_cli }}'\n"
        f"remote_dir: {tmp_path / 'remote'}\n"
        "health:\n"
        "  max_latency_regression: 100000.0\n"  # smoke latency is noise on a shared machine
        "  runs: 1\n"
        "  metrics: {window_s: 2, min_requests: 5, max_error_rate: 0.1, max_restarts: 0}\n"
        "failure_threshold: 0\n"
    )
    report_path = tmp_path / "report.json"
    work = tmp_path / "work"
    code = rollout(plan, inventory, "--workdir", work, "--report", report_path)
    out = capsys.readouterr().out
    logs = "\n".join(p.read_text() for p in sorted(work.glob("wave-*.log")))
    assert code == 1, out + logs
    report = json.loads(report_path.read_text())
    by_host = {d["host"]: d for d in report["devices"]}

    healthy = by_host["dev1"]
    assert healthy["result"] == "updated", logs
    assert healthy["metrics"]["requests"] >= 5 and healthy["metrics"]["errors"] == 0
    assert healthy["metrics"]["ttft_p95_ms"] is not None
    assert healthy["metrics"]["serving"] == [{"name": "tiny", "slot": "B", "version": "2.0.0"}]

    failing = by_host["dev2"]
    assert failing["result"] == "rolled_back", logs
    found = re.match(
        r"live-traffic gate failed: dev2: error rate ([0-9.]+) \(engine_error\+deadline \d+ "
        r"of \d+ requests\) > max_error_rate 0\.1$",
        failing["reason"],
    )
    assert found, failing["reason"]
    assert 0.2 <= float(found.group(1)) <= 0.3  # one in four, give or take a scrape mid-tick
    assert failing["new_version"] == "1.0.0"
    assert report["halted"] and "failure threshold 0" in report["halt_reason"]

    # dev3 passed the gate in the failing wave; the halt rolls the whole wave back.
    assert by_host["dev3"]["result"] == "rolled_back", logs
    assert by_host["dev3"]["reason"] == "wave 2 rolled back after the halt"
    assert by_host["dev3"]["metrics"]["errors"] == 0

    assert devices["dev1"].status()["version"] == "2.0.0"
    for name in ("dev2", "dev3"):
        assert devices[name].status()["version"] == "1.0.0"
    # The gate's failure (dev2) and the halt's rollback (dev3) are one rollback run.
    rollback_runs = sorted(p.name for p in work.glob("wave-2-*rollback*.log"))
    assert rollback_runs == ["wave-2-rollback.log"], rollback_runs
