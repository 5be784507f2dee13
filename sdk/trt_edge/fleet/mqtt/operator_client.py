"""The operator's two conversations with the broker: read the fleet's state, command a device.

`read_fleet` subscribes to every device's retained state and presence and returns what
arrived once the broker has gone quiet for `settle_s` (retained messages come at once after
a subscription; MQTT has no "that was all" marker), bounded by `wait_s`. `send_command`
subscribes to the device's acks, publishes the command (QoS 1, to the device's persistent
session: a device that is away gets it when it comes back) and waits for the ack that
carries its id. A report that does not decode is kept as a problem naming the topic, not
dropped and not fatal.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from trt_edge_runner.link import topics
from trt_edge_runner.link.broker import BrokerSettings, connect_client
from trt_edge_runner.link.documents import (
    Ack,
    Command,
    DeviceState,
    decode_ack,
    decode_device_state,
    decode_presence,
)
from trt_edge_runner.schemas import DocumentError

from trt_edge.fleet.mqtt.errors import FleetLinkError

CONNECT_TIMEOUT_S = 10.0


@dataclass
class DeviceView:
    """What the broker holds for one device: its state, whether its link is up, problems."""

    device: str
    state: DeviceState | None = None
    online: bool | None = None
    problems: list[str] = field(default_factory=list)


@dataclass
class FleetView:
    fleet: str
    devices: dict[str, DeviceView] = field(default_factory=dict)

    def device(self, name: str) -> DeviceView:
        return self.devices.setdefault(name, DeviceView(name))


class Connection:
    """A connected operator client; the broker's refusal or silence is a FleetLinkError."""

    def __init__(
        self, broker: BrokerSettings, timeout_s: float, on_message: Callable[..., None]
    ) -> None:
        self.broker = broker
        self.connected = threading.Event()
        self.subscribed = threading.Event()
        self.refused: str | None = None

        def callbacks(client: Any) -> None:
            client.on_connect = self._on_connect
            client.on_message = on_message
            client.on_subscribe = lambda *args: self.subscribed.set()

        self.client = connect_client(
            broker,
            f"trt-edge-operator-{secrets.token_hex(4)}",
            persistent=False,
            callbacks=callbacks,
        )
        if not self.connected.wait(timeout_s) or self.refused is not None:
            self.close()
            raise FleetLinkError(
                f"{broker}: "
                + (
                    f"the broker refused the connection: {self.refused}"
                    if self.refused
                    else f"no connection within {timeout_s:g} s"
                ),
                hint="check --broker, --ca-file (TLS), --username and --password-file",
            )

    def _on_connect(self, client: Any, userdata: Any, flags: Any, reason: Any, props: Any) -> None:
        if reason.is_failure:
            self.refused = str(reason)
        self.connected.set()

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def read_fleet(
    broker: BrokerSettings, fleet: str, *, settle_s: float = 1.0, wait_s: float = 10.0
) -> FleetView:
    """Every device's retained state and presence in `fleet`."""
    view = FleetView(fleet)
    arrived = threading.Event()
    lock = threading.Lock()

    def on_message(client: Any, userdata: Any, message: Any) -> None:
        place = topics.device_of(fleet, message.topic)
        if place is None:
            return
        name, kind = place
        with lock:
            entry = view.device(name)
            try:
                if kind == topics.STATE:
                    entry.state = decode_device_state(bytes(message.payload), message.topic)
                elif kind == topics.ONLINE:
                    entry.online = decode_presence(bytes(message.payload), message.topic)
            except DocumentError as exc:
                entry.problems.append(str(exc))
        arrived.set()

    connection = Connection(broker, min(wait_s, CONNECT_TIMEOUT_S), on_message)
    try:
        connection.client.subscribe(
            [
                (topics.topic(fleet, "+", topics.STATE), 1),
                (topics.topic(fleet, "+", topics.ONLINE), 1),
            ]
        )
        deadline = time.monotonic() + wait_s
        while arrived.wait(min(settle_s, max(0.0, deadline - time.monotonic()))):
            arrived.clear()
            if time.monotonic() >= deadline:
                break
    finally:
        connection.close()
    return view


def send_command(
    broker: BrokerSettings, fleet: str, device: str, command: Command, *, timeout_s: float = 30.0
) -> Ack:
    """Publish `command` to `device` and return its ack; FleetLinkError when none comes."""
    answered = threading.Event()
    acks: list[Ack] = []
    problems: list[str] = []

    def on_message(client: Any, userdata: Any, message: Any) -> None:
        try:
            ack = decode_ack(bytes(message.payload), message.topic)
        except DocumentError as exc:
            problems.append(str(exc))
            return
        if ack.command_id == command.command_id:
            acks.append(ack)
            answered.set()

    connection = Connection(broker, min(timeout_s, CONNECT_TIMEOUT_S), on_message)
    try:
        client = connection.client
        client.subscribe(topics.topic(fleet, device, topics.ACK), qos=1)
        if not connection.subscribed.wait(timeout_s):
            raise FleetLinkError(f"{broker}: the broker did not confirm the ack subscription")
        info = client.publish(topics.topic(fleet, device, topics.COMMAND), command.to_json(), qos=1)
        info.wait_for_publish(timeout_s)
        if not answered.wait(timeout_s):
            detail = f" (unreadable acks: {'; '.join(problems)})" if problems else ""
            raise FleetLinkError(
                f"{device}: no ack for command {command.command_id} within {timeout_s:g} s{detail}",
                hint="is its link online? `trt-edge fleet status` shows; the command stays "
                "queued at the broker for the device's next connection",
            )
    finally:
        connection.close()
    return acks[0]
