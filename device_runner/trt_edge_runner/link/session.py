"""The link's loop: keep the broker told of this device's state, act on its commands.

paho's network thread receives commands and only queues them; this loop (the main thread)
applies each one, so a rollback holds the agent's lock here, never in the thread that
keeps the connection alive. Every `tick_s` it gathers the state from the agent's files and
publishes it (retained, QoS 1) when it changed, after each command, after every
(re)connect — a restarted broker without persistence has forgotten it — and at least every
`every_s` seconds, with a fresh scrape of the local service's metrics. The presence topic
says `true` on each connect; the broker publishes the will, `false`, when the link
vanishes, and the link publishes `false` itself when told to stop (SIGTERM, Ctrl-C).
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trt_edge_runner.agent.store import DeviceStore
from trt_edge_runner.link import topics
from trt_edge_runner.link.actions import handle_payload
from trt_edge_runner.link.broker import BrokerSettings, connect_client
from trt_edge_runner.link.documents import DeviceState, HealthSummary, presence_json
from trt_edge_runner.link.state import Scraped, gather_state, scrape_metrics

LOG = logging.getLogger("trt_edge_runner.link")
# Commands waiting for the loop; more than this while one runs is a misbehaving operator.
MAX_PENDING_COMMANDS = 64

HealthCheck = Callable[[], HealthSummary]


@dataclass(frozen=True)
class LinkSettings:
    fleet: str
    device: str
    root: Path
    keys: Path
    metrics_url: str | None = None
    every_s: float = 30.0
    tick_s: float = 1.0


class _Inbox:
    """What paho's thread hands the loop: commands, and that a (re)connect happened."""

    def __init__(self) -> None:
        self.commands: queue.Queue[tuple[str, bytes]] = queue.Queue(MAX_PENDING_COMMANDS)
        self.connected = threading.Event()
        self.reconnected = threading.Event()


def _callbacks(client: Any, settings: LinkSettings, inbox: _Inbox) -> None:
    command_topic = topics.topic(settings.fleet, settings.device, topics.COMMAND)
    online_topic = topics.topic(settings.fleet, settings.device, topics.ONLINE)

    def on_connect(client: Any, userdata: Any, flags: Any, reason: Any, props: Any) -> None:
        if reason.is_failure:
            LOG.warning("broker refused the connection: %s (retrying)", reason)
            return
        client.subscribe(command_topic, qos=1)
        client.publish(online_topic, presence_json(True), qos=1, retain=True)
        inbox.connected.set()
        inbox.reconnected.set()

    def on_disconnect(client: Any, userdata: Any, flags: Any, reason: Any, props: Any) -> None:
        inbox.connected.clear()
        LOG.warning("disconnected from the broker: %s (reconnecting)", reason)

    def on_message(client: Any, userdata: Any, message: Any) -> None:
        try:
            inbox.commands.put_nowait((message.topic, bytes(message.payload)))
        except queue.Full:
            LOG.warning("dropped a command: %d are already waiting", MAX_PENDING_COMMANDS)

    client.on_connect = on_connect
    client.on_disconnect = on_disconnect
    client.on_message = on_message


def run_link(
    settings: LinkSettings,
    broker: BrokerSettings,
    stop: threading.Event,
    health_check: HealthCheck | None = None,
) -> None:
    """Run until `stop` is set: publish state, apply commands, ack each one."""
    state_topic = topics.topic(settings.fleet, settings.device, topics.STATE)
    ack_topic = topics.topic(settings.fleet, settings.device, topics.ACK)
    online_topic = topics.topic(settings.fleet, settings.device, topics.ONLINE)
    command_topic = topics.topic(settings.fleet, settings.device, topics.COMMAND)
    store = DeviceStore(settings.root)
    inbox = _Inbox()
    client = connect_client(
        broker,
        f"trt-edge-{settings.fleet}-{settings.device}",
        persistent=True,
        will=(online_topic, presence_json(False)),
        callbacks=lambda client: _callbacks(client, settings, inbox),
    )
    published: DeviceState | None = None
    last_publish = float("-inf")
    scraped: Scraped | None = None
    health: HealthSummary | None = None
    checked_version: str | None = None
    try:
        while not stop.is_set():
            force = False
            try:
                topic, payload = inbox.commands.get(timeout=settings.tick_s)
            except queue.Empty:
                pass
            else:
                ack = handle_payload(
                    payload, device=settings.device, store=store, keys=settings.keys, topic=topic
                )
                LOG.info("command %s: %s: %s", ack.command_id, ack.outcome, ack.message)
                client.publish(ack_topic, ack.to_json(), qos=1)
                force = True
            due = time.monotonic() - last_publish >= settings.every_s
            if due and settings.metrics_url is not None:
                scraped = scrape_metrics(settings.metrics_url)
            state = gather_state(settings.device, store, health, scraped)
            if health_check is not None and state.version != checked_version:
                checked_version = state.version
                health = health_check() if state.version is not None else None
                state = gather_state(settings.device, store, health, scraped)
            just_connected = inbox.reconnected.is_set()
            if just_connected:
                inbox.reconnected.clear()
                force = True
            if inbox.connected.is_set() and (force or due or not state.same_facts(published)):
                sent = client.publish(state_topic, state.to_json(), qos=1, retain=True)
                published, last_publish = state, time.monotonic()
                if just_connected:
                    # Said once the broker holds the presence and the state (published in
                    # this order on one connection): what a watcher of this log may rely on.
                    sent.wait_for_publish(timeout=settings.every_s)
                    LOG.info("connected; taking commands on %s", command_topic)
    finally:
        if inbox.connected.is_set():
            client.publish(online_topic, presence_json(False), qos=1, retain=True).wait_for_publish(
                timeout=5
            )
        client.disconnect()
        client.loop_stop()
