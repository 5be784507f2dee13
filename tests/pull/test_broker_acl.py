"""The broker set-up `trt-edge fleet broker-config` writes, held to a real mosquitto: each
device reaches only its own topics, TLS is the only way in, passwords are per device."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from trt_edge.fleet.mqtt.broker_config import BrokerPlan, write_broker_config
from trt_edge.fleet.mqtt.errors import BrokerConfigError, FleetLinkError
from trt_edge.fleet.mqtt.operator_client import read_fleet

from tests.pull.broker import FLEET, Broker
from tests.pull.clients import RawClient


def test_a_device_cannot_publish_another_devices_state(broker: Broker) -> None:
    forger = RawClient(broker, "d2")
    try:
        refused = forger.publish(f"trt-edge/{FLEET}/d1/state", b'{"forged": true}')
        own = forger.publish(f"trt-edge/{FLEET}/d2/ack", b"{}")
    finally:
        forger.close()
    assert str(refused) == "Not authorized"
    assert not own.is_failure


def test_a_device_does_not_receive_another_devices_commands(broker: Broker) -> None:
    snoop = RawClient(broker, "d3")
    operator = RawClient(broker, "operator")
    try:
        snoop.subscribe(f"trt-edge/{FLEET}/d4/command")
        snoop.subscribe(f"trt-edge/{FLEET}/d3/command")
        operator.publish(f"trt-edge/{FLEET}/d4/command", b"for d4")
        operator.publish(f"trt-edge/{FLEET}/d3/command", b"for d3")
        # The broker delivers in order: had d4's command reached d3, it would come first.
        assert snoop.next_message() == (f"trt-edge/{FLEET}/d3/command", b"for d3")
    finally:
        snoop.close()
        operator.close()


def test_a_device_cannot_command_another_device(broker: Broker) -> None:
    rogue = RawClient(broker, "d5")
    try:
        assert str(rogue.publish(f"trt-edge/{FLEET}/d6/command", b"{}")) == "Not authorized"
    finally:
        rogue.close()


def test_without_the_ca_the_operator_cannot_connect(broker: Broker) -> None:
    # The listener speaks TLS only: a plain MQTT client is never answered.
    with pytest.raises(FleetLinkError, match="no connection within"):
        read_fleet(broker.settings("operator", ca=False), FLEET, wait_s=3)


def test_a_wrong_password_is_refused_naming_the_reason(broker: Broker) -> None:
    settings = dataclasses.replace(broker.settings("operator"), password="not-it")
    with pytest.raises(FleetLinkError, match="refused the connection: Not authorized"):
        read_fleet(settings, FLEET, wait_s=10)


def test_rerunning_with_another_device_keeps_provisioned_credentials(tmp_path: Path) -> None:
    plan = BrokerPlan(folder=tmp_path, fleet="f", devices=("a",), port=1883)
    first = write_broker_config(plan)
    password, ca = first.credentials["a"].read_bytes(), first.tls.ca_cert.read_bytes()
    again = write_broker_config(dataclasses.replace(plan, devices=("a", "b")))
    assert again.credentials["a"].read_bytes() == password
    assert again.tls.ca_cert.read_bytes() == ca
    users = [line.split(":")[0] for line in again.password_file.read_text().splitlines()]
    assert users == ["operator", "a", "b"]
    assert (again.credentials["b"].stat().st_mode & 0o777) == 0o600


@pytest.mark.parametrize(
    ("devices", "field"),
    [(("a/b",), "a/b"), (("+",), "+"), (("operator",), "operator"), (("a", "a"), "--device")],
)
def test_names_that_cannot_be_topic_levels_are_refused(
    tmp_path: Path, devices: tuple[str, ...], field: str
) -> None:
    with pytest.raises(BrokerConfigError) as refused:
        write_broker_config(BrokerPlan(folder=tmp_path, fleet="f", devices=devices))
    assert field in str(refused.value)
    assert not (tmp_path / "mosquitto.conf").exists()
    json.dumps(refused.value.to_dict())  # the --json error document renders
