"""The operator's connection to the broker: one session that follows a whole fleet.

`fleet_session` subscribes to every device's state, presence and acks; messages are
decoded in paho's thread and kept under a condition variable, so `wait_for` returns as
soon as a predicate over what arrived holds (no polling), or False at its deadline. A
report that does not decode is kept as a problem of its device, never dropped silently and
never fatal. On it: `read_fleet` returns what arrived once the broker went quiet for
`settle_s` (retained messages come at once after a subscription; MQTT has no "that was
all" marker); `send_command` publishes a command (QoS 1, to the device's persistent
session: a device that is away gets it when it comes back) and waits for the ack that
carries its id; the pull rollout (`pull_rollout.py`) drives many devices through one.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
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


class FleetSession:
    """The fleet as this connection has seen it (`view`), the acks by command id, commands."""

    def __init__(self, fleet: str) -> None:
        self.fleet = fleet
        self.view = FleetView(fleet)
        self.acks: dict[str, Ack] = {}
        self.received = 0  # messages so far: how `settle` tells a quiet broker
        self.changed = threading.Condition()
        self.connection: Connection | None = None

    def on_message(self, client: Any, userdata: Any, message: Any) -> None:
        place = topics.device_of(self.fleet, message.topic)
        if place is None:
            return
        name, kind = place
        payload = bytes(message.payload)
        with self.changed:
            entry = self.view.device(name)
            try:
                if kind == topics.STATE:
                    entry.state = decode_device_state(payload, message.topic)
                elif kind == topics.ONLINE:
                    entry.online = decode_presence(payload, message.topic)
                elif kind == topics.ACK:
                    ack = decode_ack(payload, message.topic)
                    if ack.command_id is not None:
                        self.acks[ack.command_id] = ack
            except DocumentError as exc:
                entry.problems.append(str(exc))
            self.received += 1
            self.changed.notify_all()

    def send(self, device: str, command: Command) -> None:
        assert self.connection is not None
        info = self.connection.client.publish(
            topics.topic(self.fleet, device, topics.COMMAND), command.to_json(), qos=1
        )
        info.wait_for_publish(CONNECT_TIMEOUT_S)

    def wait_for(self, ready: Callable[[], bool], timeout_s: float) -> bool:
        """Wait until `ready()` (called under the lock, over `view` and `acks`) holds."""
        deadline = time.monotonic() + timeout_s
        with self.changed:
            while not ready():
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self.changed.wait(left)
            return True

    def settle(self, quiet_s: float, timeout_s: float) -> None:
        """Return once no message came for `quiet_s` (the retained ones have all arrived:
        MQTT has no "that was all" marker), or at `timeout_s`."""
        deadline = time.monotonic() + timeout_s
        with self.changed:
            while time.monotonic() < deadline:
                seen = self.received
                self.changed.wait(min(quiet_s, max(0.0, deadline - time.monotonic())))
                if self.received == seen:
                    return


@contextmanager
def fleet_session(
    broker: BrokerSettings, fleet: str, connect_timeout_s: float = CONNECT_TIMEOUT_S
) -> Iterator[FleetSession]:
    """A connected `FleetSession`, subscribed to every device's state, presence and acks."""
    session = FleetSession(fleet)
    connection = Connection(broker, connect_timeout_s, session.on_message)
    session.connection = connection
    try:
        connection.client.subscribe(
            [
                (topics.topic(fleet, "+", kind), 1)
                for kind in (topics.STATE, topics.ONLINE, topics.ACK)
            ]
        )
        if not connection.subscribed.wait(CONNECT_TIMEOUT_S):
            raise FleetLinkError(f"{broker}: the broker did not confirm the subscriptions")
        yield session
    finally:
        connection.close()


def read_fleet(
    broker: BrokerSettings, fleet: str, *, settle_s: float = 1.0, wait_s: float = 10.0
) -> FleetView:
    """Every device's retained state and presence in `fleet`."""
    with fleet_session(broker, fleet, min(wait_s, CONNECT_TIMEOUT_S)) as session:
        session.settle(settle_s, wait_s)
        return session.view


def send_command(
    broker: BrokerSettings, fleet: str, device: str, command: Command, *, timeout_s: float = 30.0
) -> Ack:
    """Publish `command` to `device` and return its ack; FleetLinkError when none comes."""
    with fleet_session(broker, fleet, min(timeout_s, CONNECT_TIMEOUT_S)) as session:
        session.send(device, command)
        if session.wait_for(lambda: command.command_id in session.acks, timeout_s):
            return session.acks[command.command_id]
        problems = session.view.device(device).problems
    detail = f" (unreadable reports: {'; '.join(problems)})" if problems else ""
    raise FleetLinkError(
        f"{device}: no ack for command {command.command_id} within {timeout_s:g} s{detail}",
        hint="is its link online? `trt-edge fleet status` shows; the command stays "
        "queued at the broker for the device's next connection",
    )
