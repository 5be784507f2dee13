"""The device's link (`trt-edge-device mqtt`, a real process) and the operator's commands
(`trt-edge fleet status|command`) over a real mosquitto with TLS and per-device passwords."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from trt_edge.fleet.metrics_gate import BUNDLE_INFO, Scrape
from trt_edge.fleet.mqtt.operator_client import read_fleet, send_command
from trt_edge.fleet.mqtt.status_view import decode_fleet_status
from trt_edge_runner.link.desired import PullTarget, read_desired
from trt_edge_runner.link.documents import Command, decode_ack
from trt_edge_runner.serve.metrics import Metrics

from tests.helpers.waits import wait_until
from tests.pull.broker import FLEET, Broker, free_port, start_broker
from tests.pull.clients import RawClient
from tests.pull.link import Link

StartLink = Callable[..., Link]


def fleet_cli(broker: Broker, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "trt_edge",
            "fleet",
            *args[:1],
            *broker.flags("operator"),
            "--fleet",
            FLEET,
            *args[1:],
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_retained_state_and_presence_show_in_fleet_status(broker: Broker, links: StartLink) -> None:
    links(broker, "d1")
    shown = fleet_cli(broker, "status", "--json")
    assert shown.returncode == 0, shown.stderr
    status = decode_fleet_status(shown.stdout, "fleet status --json")
    row = {r.device: r for r in status.devices}["d1"]
    assert row.online is True
    assert row.version is None and row.slot is None  # nothing installed yet, and said so
    assert row.last_seen is not None
    table = fleet_cli(broker, "status")
    assert table.returncode == 0, table.stderr
    assert "d1" in table.stdout and "online" in table.stdout


def test_update_hold_and_resume_are_acked_and_written_to_desired(
    broker: Broker, links: StartLink
) -> None:
    link = links(broker, "d2")
    update = fleet_cli(
        broker, "command", "d2", "update", "registry.lab/models/tiny:2.0.0", "--version", "2.0.0"
    )
    assert update.returncode == 0, update.stdout + update.stderr
    assert "d2: done" in update.stdout
    desired = read_desired(link.root)
    assert desired.target == PullTarget("registry.lab/models/tiny:2.0.0", "2.0.0")
    assert desired.hold is False
    held = fleet_cli(broker, "command", "d2", "hold", "--json")
    assert held.returncode == 0, held.stderr
    ack = decode_ack(held.stdout, "command --json")
    assert (ack.outcome, ack.action, ack.device) == ("done", "hold", "d2")
    assert read_desired(link.root).hold is True
    assert read_desired(link.root).target == desired.target  # a hold keeps the target
    assert read_desired(link.root).command_id == ack.command_id
    fleet_cli(broker, "command", "d2", "resume")
    assert read_desired(link.root).hold is False


def test_a_command_applied_twice_acts_once(broker: Broker, links: StartLink) -> None:
    link = links(broker, "d3")
    command = Command("twice-1", "hold", "2026-12-07T12:00:00Z")
    first = send_command(broker.settings("operator"), FLEET, "d3", command)
    second = send_command(broker.settings("operator"), FLEET, "d3", command)
    assert first.outcome == second.outcome == "done"
    assert "already applied" in second.message and "already" not in first.message
    assert read_desired(link.root).command_id == "twice-1"


@pytest.mark.parametrize(
    ("payload", "field", "command_id"),
    [
        (b"not json", "", None),
        (b'{"schema_version": 1, "command_id": "c1", "issued_at": "t"}', "action", "c1"),
        (
            b'{"schema_version": 1, "command_id": "c2", "issued_at": "t", "action": "reboot"}',
            "action",
            "c2",
        ),
        (
            b'{"schema_version": 1, "command_id": "c3", "issued_at": "t", "action": "update"}',
            "target",
            "c3",
        ),
        (
            b'{"schema_version": 1, "command_id": "c4", "issued_at": "t", "action": "hold",'
            b' "urgent": true}',
            "urgent",
            "c4",
        ),
        (
            b'{"schema_version": 1, "command_id": "c5", "issued_at": "t", "action": "update",'
            b' "target": {"reference": "r:1"}}',
            "target.version",
            "c5",
        ),
    ],
)
def test_a_bad_command_is_refused_naming_the_field_and_the_link_lives_on(
    broker: Broker, links: StartLink, payload: bytes, field: str, command_id: str | None
) -> None:
    link = links(broker, "d4")
    operator = RawClient(broker, "operator")
    try:
        operator.subscribe(f"trt-edge/{FLEET}/d4/ack")
        operator.publish(f"trt-edge/{FLEET}/d4/command", payload)
        topic, body = operator.next_message()
    finally:
        operator.close()
    ack = decode_ack(body, topic)
    assert ack.outcome == "refused"
    assert ack.command_id == command_id
    assert ack.field is not None and field in ack.field if field else ack.field == ""
    assert field in ack.message
    assert link.process.poll() is None
    after = send_command(broker.settings("operator"), FLEET, "d4", Command("ok-after", "hold", "t"))
    assert after.outcome == "done"
    assert not (link.root / "desired.json").exists() or read_desired(link.root).hold


def test_no_ack_is_a_clear_error_naming_the_device(broker: Broker) -> None:
    late = fleet_cli(broker, "command", "d6", "hold", "--timeout", "1")
    assert late.returncode == 1
    assert "d6: no ack for command" in late.stderr and "fleet status" in late.stderr
    assert "Traceback" not in late.stderr


def test_the_link_survives_a_broker_restart(tmp_path: Path, links: StartLink) -> None:
    own = start_broker(tmp_path / "broker")
    try:
        link = links(own, "d5")
        own.stop()
        own.start()  # persistence is off: the restarted broker holds no state at all
        link.wait_connected(count=2)
        view = wait_until(
            lambda: read_fleet(own.settings("operator"), FLEET, wait_s=5).devices.get("d5"),
            "d5's state on the restarted broker",
            until=lambda entry: entry is not None and entry.state is not None,
        )
        assert view is not None and view.online is True
        ack = send_command(own.settings("operator"), FLEET, "d5", Command("after", "hold", "t"))
        assert ack.outcome == "done"
    finally:
        own.stop()


def test_stopping_the_link_marks_it_offline(broker: Broker, links: StartLink) -> None:
    link = links(broker, "d1")
    assert read_fleet(broker.settings("operator"), FLEET).devices["d1"].online is True
    link.stop()
    entry = read_fleet(broker.settings("operator"), FLEET).devices["d1"]
    assert entry.online is False
    assert entry.state is not None  # the last state stays: what it ran when it left


def test_a_link_that_dies_is_marked_offline_by_its_will(broker: Broker, links: StartLink) -> None:
    link = links(broker, "d3")
    link.process.kill()  # no goodbye: the broker sees the connection drop
    link.process.wait(timeout=60)
    entry = wait_until(
        lambda: read_fleet(broker.settings("operator"), FLEET).devices["d3"],
        "d3's will",
        until=lambda entry: entry.online is False,
    )
    assert entry.online is False


@pytest.fixture
def metrics_url() -> Iterator[str]:
    """A loopback /metrics serving what the device service's own `Metrics` renders."""
    served = Metrics()
    served.request("tiny", "generate", "ok")
    served.model("tiny").ttft.observe(0.02)
    served.loaded("tiny", "2.0.0", "B")
    body = served.render()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/metrics"
    finally:
        server.shutdown()
        server.server_close()


def test_the_state_carries_the_services_gate_metrics(
    broker: Broker, links: StartLink, metrics_url: str
) -> None:
    links(broker, "d5", "--metrics-url", metrics_url)
    entry = read_fleet(broker.settings("operator"), FLEET).devices["d5"]
    assert entry.state is not None and entry.state.metrics is not None
    scrape = Scrape.parse(entry.state.metrics)
    assert scrape.named(BUNDLE_INFO) == {
        (("name", "tiny"), ("slot", "B"), ("version", "2.0.0")): 1.0
    }
    assert entry.state.metrics_error is None


def test_a_service_that_does_not_answer_is_reported_not_fatal(
    broker: Broker, links: StartLink
) -> None:
    closed = f"http://127.0.0.1:{free_port()}/metrics"
    link = links(broker, "d6", "--metrics-url", closed)
    entry = read_fleet(broker.settings("operator"), FLEET).devices["d6"]
    assert entry.state is not None and entry.state.metrics is None
    assert entry.state.metrics_error is not None and closed in entry.state.metrics_error
    assert link.process.poll() is None
