"""A plain paho client for what the product's own clients never do (forge, misbehave):
MQTT 5, so the broker's refusals come back as reason codes instead of silence."""

from __future__ import annotations

import queue
import threading

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion
from paho.mqtt.reasoncodes import ReasonCode

from tests.pull.broker import Broker

WAIT_S = 60.0  # generous: only a broken test waits this long


class RawClient:
    def __init__(self, broker: Broker, user: str) -> None:
        self.messages: queue.Queue[tuple[str, bytes]] = queue.Queue()
        self.acks: queue.Queue[list[ReasonCode]] = queue.Queue()
        self.published: queue.Queue[tuple[int, ReasonCode]] = queue.Queue()
        self.connected = threading.Event()
        self.client = mqtt.Client(
            CallbackAPIVersion.VERSION2, client_id=f"raw-{user}", protocol=mqtt.MQTTv5
        )
        self.client.tls_set(ca_certs=str(broker.files.tls.ca_cert))
        self.client.username_pw_set(user, broker.password(user))
        self.client.on_connect = lambda *args: self.connected.set()
        self.client.on_message = lambda c, u, m: self.messages.put((m.topic, bytes(m.payload)))
        self.client.on_subscribe = lambda c, u, mid, codes, props: self.acks.put(list(codes))
        self.client.on_publish = lambda c, u, mid, code, props: self.published.put((mid, code))
        self.client.connect("127.0.0.1", broker.port)
        self.client.loop_start()
        assert self.connected.wait(WAIT_S), "the raw client did not connect"

    def publish(self, topic: str, payload: bytes) -> ReasonCode:
        """Publish at QoS 1 and return the reason code of the broker's PUBACK."""
        info = self.client.publish(topic, payload, qos=1)
        mid, code = self.published.get(timeout=WAIT_S)
        assert mid == info.mid
        return code

    def subscribe(self, topic: str) -> list[ReasonCode]:
        self.client.subscribe(topic, qos=1)
        return self.acks.get(timeout=WAIT_S)

    def next_message(self) -> tuple[str, bytes]:
        return self.messages.get(timeout=WAIT_S)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()
