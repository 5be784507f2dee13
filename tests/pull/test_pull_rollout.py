"""The pull rollout (`trt-edge fleet rollout`) over real links, a real mosquitto and real
agents: the plan's waves as update commands, the gate read from the devices' reports, a
failed gate rolled back and the rest held. What installs is the test's stand-in for the
follower (`applier.py`): it reads desired.json and runs the real `trt-edge-device install`."""

from __future__ import annotations

import http.server
import json
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

from trt_edge.fleet.mqtt.operator_client import fleet_session
from trt_edge.fleet.mqtt.pull_rollout import PullPlan, cut_waves, run_pull_rollout
from trt_edge.fleet.plan import MetricsGate
from trt_edge_runner.link.desired import PullTarget, read_desired
from trt_edge_runner.serve.metrics import Metrics

from tests.agent.device import Device
from tests.helpers.fixtures_bundles import Bundles
from tests.pull.applier import applying
from tests.pull.broker import FLEET, Broker
from tests.pull.link import Link

StartLink = Callable[..., Link]
V2 = PullTarget("registry.lab/models/tiny:2.0.0", "2.0.0")


def test_waves_are_cut_as_the_plan_says() -> None:
    assert cut_waves(["a", "b", "c", "d"], [1, "50%", "100%"]) == [("a",), ("b",), ("c", "d")]


def fleet_of(
    names: tuple[str, ...],
    broker: Broker,
    links: StartLink,
    agents: Callable[[str], Device],
    bundles: Bundles,
    tight_budget: frozenset[str] = frozenset(),
) -> dict[str, Device]:
    """Devices running 1.0.0, each with its link up and reporting its health."""
    devices = {}
    for name in names:
        device = agents(name)
        if name in tight_budget:  # every phase is slower than this: health fails
            device.config.write_text(json.dumps({"health": {"latency_budget_ms": 1e-6}}))
        device.run("install", str(bundles.v1), check=True)
        links(broker, name, "--health", root=device.root, env=device.env())
        devices[name] = device
    return devices


def test_a_healthy_rollout_updates_every_wave(
    broker: Broker, links: StartLink, agents: Callable[[str], Device], agent_bundles: Bundles
) -> None:
    devices = fleet_of(("p1", "p2"), broker, links, agents, agent_bundles)
    plan = PullPlan(target=V2, devices=("p1", "p2"), waves=(1, "100%"), wave_timeout_s=300)
    with (
        applying(devices, {V2.reference: agent_bundles.v2}) as installs,
        fleet_session(broker.settings("operator"), FLEET) as session,
    ):
        report = run_pull_rollout(session, plan)
    assert [(d.host, d.result, d.wave) for d in report.devices] == [
        ("p1", "updated", 1),
        ("p2", "updated", 2),
    ], (report.to_json(), installs)
    assert report.waves == [["p1"], ["p2"]] and not report.halted
    assert report.name == "tiny"
    for device in devices.values():
        assert device.status()["version"] == "2.0.0"


def test_a_failed_canary_is_rolled_back_and_the_rest_held(
    broker: Broker,
    links: StartLink,
    agents: Callable[[str], Device],
    agent_bundles: Bundles,
    tmp_path: Path,
) -> None:
    names = ("p3", "p4", "p5")
    devices = fleet_of(names, broker, links, agents, agent_bundles, frozenset({"p3"}))
    plan_file = tmp_path / "plan.yaml"
    plan_file.write_text(
        "bundle: tiny-2.0.0.tar\nwaves: [1, '100%']\nfailure_threshold: 0\non_halt: rollback_wave\n"
    )
    with applying(devices, {V2.reference: agent_bundles.v2}):
        done = subprocess.run(
            [sys.executable, "-m", "trt_edge", "fleet", "rollout", str(plan_file),
             *broker.flags("operator"), "--fleet", FLEET, "--reference", V2.reference,
             "--version", V2.version, "--device", "p3", "--device", "p4", "--device", "p5",
             "--wave-timeout", "300", "--json"],
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )  # fmt: skip
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    results = {d["host"]: d for d in report["devices"]}
    assert results["p3"]["result"] == "rolled_back"
    assert "health check failed" in results["p3"]["reason"]
    assert report["halted"] is True and "failure threshold" in report["halt_reason"]
    assert results["p4"]["result"] == results["p5"]["result"] == "not_attempted"
    assert devices["p3"].status()["version"] == "1.0.0"  # the agent's rollback ran
    for name in names:
        assert read_desired(devices[name].root).hold is True
        assert devices[name].status()["version"] == "1.0.0"


class _Service:
    """A device's service metrics, as `trt-edge-device serve` renders them (its own `Metrics`),
    on a loopback port, taking requests all along: `outcome` says how each one ends."""

    def __init__(self, outcome: str) -> None:
        self.metrics = Metrics()
        self.metrics.loaded("tiny", "2.0.0", "B")
        metrics = self.metrics

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                body = metrics.render()
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4")
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.stop = threading.Event()
        self.threads = [
            threading.Thread(target=self.server.serve_forever, daemon=True),
            threading.Thread(target=self.traffic, args=(outcome,), daemon=True),
        ]
        for thread in self.threads:
            thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/metrics"

    def traffic(self, outcome: str) -> None:
        while not self.stop.wait(0.05):
            self.metrics.request("tiny", "generate", outcome)
            self.metrics.model("tiny").ttft.observe(0.01)

    def close(self) -> None:
        self.stop.set()
        self.server.shutdown()
        self.server.server_close()


def test_the_live_traffic_gate_fails_a_device_whose_service_errors(
    broker: Broker, links: StartLink, agents: Callable[[str], Device], agent_bundles: Bundles
) -> None:
    """`health.metrics` on a pull fleet: judged from two of each device's states a window
    apart, on the figures its link scraped from its service (as the SSH rollout judges its
    two scrapes); the device whose requests fail goes back, the healthy one stays."""
    services = {"d5": _Service("ok"), "d6": _Service("engine_error")}
    try:
        devices = {}
        for name, service in services.items():
            device = agents(name)
            device.run("install", str(agent_bundles.v1), check=True)
            links(broker, name, "--metrics-url", service.url, root=device.root, env=device.env())
            devices[name] = device
        gate = MetricsGate(window_s=2, min_requests=1, max_error_rate=0.01)
        plan = PullPlan(
            target=V2,
            devices=("d5", "d6"),
            waves=("100%",),
            failure_threshold="100%",
            require_health=False,
            wave_timeout_s=300,
            metrics=gate,
        )
        with (
            applying(devices, {V2.reference: agent_bundles.v2}),
            fleet_session(broker.settings("operator"), FLEET) as session,
        ):
            report = run_pull_rollout(session, plan)
    finally:
        for service in services.values():
            service.close()
    results = {d.host: d for d in report.devices}
    assert results["d5"].result == "updated", results["d5"]
    assert results["d5"].metrics and results["d5"].metrics["requests"] > 0
    assert results["d6"].result == "rolled_back", results["d6"]
    assert "error rate" in results["d6"].reason, results["d6"].reason
    assert devices["d5"].status()["version"] == "2.0.0"
    assert devices["d6"].status()["version"] == "1.0.0"
