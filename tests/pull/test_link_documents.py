"""The link's documents and files without a broker: desired.json, the metrics it carries,
the flags it takes."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest
from trt_edge.fleet import metrics_gate
from trt_edge.fleet.metrics_gate import Scrape
from trt_edge_runner.link.broker import add_broker_arguments, broker_settings
from trt_edge_runner.link.desired import (
    Desired,
    PullTarget,
    decode_desired,
    read_desired,
    write_desired,
)
from trt_edge_runner.link.errors import LinkConfigError
from trt_edge_runner.link.state import GATE_FAMILIES, gate_lines
from trt_edge_runner.schemas import DocumentError
from trt_edge_runner.serve.metrics import Metrics

GATE_NAMES = (
    metrics_gate.REQUESTS,
    metrics_gate.TTFT,
    metrics_gate.RESTARTS,
    metrics_gate.BUNDLE_INFO,
)


def test_desired_round_trips_through_its_one_reader(tmp_path: Path) -> None:
    told = Desired(True, PullTarget("reg.lab/m/tiny:2.0.0", "2.0.0"), "c-1", "2026-12-07T12:00Z")
    write_desired(tmp_path, told)
    assert read_desired(tmp_path) == told
    assert not list(tmp_path.glob(".*tmp-*"))  # replaced whole, nothing left behind


@pytest.mark.parametrize(
    ("doc", "field"),
    [
        ({"hold": "yes"}, "hold"),
        ({"target": {"reference": "r"}}, "target"),
        ({"schema_version": 2}, "schema_version"),
        ({"pinned": True}, "pinned"),
    ],
)
def test_a_bad_desired_document_is_refused_naming_the_field(
    doc: dict[str, object], field: str
) -> None:
    good = {"schema_version": 1, "hold": False, "target": None, "command_id": "", "issued_at": ""}
    with pytest.raises(DocumentError) as refused:
        decode_desired(json.dumps({**good, **doc}), "desired.json")
    assert field in refused.value.field
    assert str(refused.value).startswith("desired.json: ")


def test_the_state_carries_what_the_gate_reads_and_the_gate_reads_it_alike() -> None:
    assert set(GATE_FAMILIES) == set(GATE_NAMES)
    served = Metrics()  # the service's own metrics, rendered as its /metrics renders them
    served.request("tiny", "generate", "ok")
    served.request("tiny", "generate", "engine_error")
    served.model("tiny").ttft.observe(0.02)
    served.model("tiny").restarts.inc()
    served.loaded("tiny", "2.0.0", "B")
    full = served.render().decode()
    cut = gate_lines(full)
    assert "trt_edge_queue_depth" not in cut and "trt_edge_queue_depth" in full
    for name in (metrics_gate.REQUESTS, metrics_gate.RESTARTS, metrics_gate.BUNDLE_INFO):
        assert Scrape.parse(cut).named(name) == Scrape.parse(full).named(name), name
    bucket = f"{metrics_gate.TTFT}_bucket"
    assert Scrape.parse(cut).named(bucket) == Scrape.parse(full).named(bucket)
    assert Scrape.parse(cut).named(bucket)  # and there is something to compare


def parse_broker_flags(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_broker_arguments(parser)
    return parser.parse_args(list(argv))


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (("--broker", "host:http"), "--broker host:http"),
        (("--broker", "host:0"), "--broker host:0"),
        (("--broker", "h", "--ca-file", "/nonexistent/ca.crt"), "--ca-file /nonexistent/ca.crt"),
        (("--broker", "h", "--cert-file", "/etc/hostname"), "--key-file"),
    ],
)
def test_broker_flags_that_cannot_be_used_are_refused_naming_the_flag(
    argv: tuple[str, ...], named: str
) -> None:
    with pytest.raises(LinkConfigError) as refused:
        broker_settings(parse_broker_flags(*argv))
    assert named in str(refused.value)


def test_a_broker_without_a_port_gets_mqtts_port() -> None:
    settings = broker_settings(parse_broker_flags("--broker", "broker.lab"))
    assert (settings.host, settings.port) == ("broker.lab", 8883)


WITHOUT_PAHO = (
    "import sys; sys.modules['paho'] = None; from trt_edge_runner.device_cli import main; "
)


def test_a_device_without_the_mqtt_extra_starts_every_command_and_says_what_to_install(
    tmp_path: Path,
) -> None:
    # `sys.modules['paho'] = None` makes every import of paho fail, as on a device without it.
    helped = subprocess.run(
        [sys.executable, "-c", WITHOUT_PAHO + "sys.exit(main(['--help']))"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert helped.returncode == 0 and "mqtt" in helped.stdout, helped.stderr
    linked = subprocess.run(
        [
            sys.executable,
            "-c",
            WITHOUT_PAHO
            + "sys.exit(main(['mqtt', '--broker', 'b', '--fleet', 'f', '--device', 'd', "
            f"'--root', {str(tmp_path)!r}]))",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert linked.returncode == 2
    assert "trt-edge-runner[mqtt]" in linked.stderr and "Traceback" not in linked.stderr
