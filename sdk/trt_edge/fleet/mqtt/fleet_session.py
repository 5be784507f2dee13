"""One operator connection that follows a whole fleet: every state, presence and ack as it
comes, and commands out — what a pull rollout needs to drive many devices at once.

Messages are decoded in paho's thread and kept under a condition variable; `wait_for`
returns as soon as a predicate over what arrived holds (no polling), or False at its
deadline. A report that does not decode is kept as a problem of its device, never dropped
silently and never fatal.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from trt_edge_runner.link import topics
from trt_edge_runner.link.broker import BrokerSettings
from trt_edge_runner.link.documents import (
    Ack,
    Command,
    decode_ack,
    decode_device_state,
    decode_presence,
)
from trt_edge_runner.schemas import DocumentError

from trt_edge.fleet.mqtt.errors import FleetLinkError
from trt_edge.fleet.mqtt.operator_client import CONNECT_TIMEOUT_S, Connection, FleetView


class FleetSession:
    """The fleet as this connection has seen it (`view`), the acks by command id, commands."""

    def __init__(self, fleet: str) -> None:
        self.fleet = fleet
        self.view = FleetView(fleet)
        self.acks: dict[str, Ack] = {}
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


@contextmanager
def fleet_session(broker: BrokerSettings, fleet: str) -> Iterator[FleetSession]:
    """A connected `FleetSession`, subscribed to every device's state, presence and acks."""
    session = FleetSession(fleet)
    connection = Connection(broker, CONNECT_TIMEOUT_S, session.on_message)
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
