"""How a trt-edge program reaches the broker: address, TLS, credentials, one paho client.

The device's link and the operator's commands (`trt-edge fleet status|command`) connect the
same way, so both go through `connect_client`: TLS verified against `ca_file` whenever one
is given (a client certificate too, when the broker asks for one), a username and the
password read from a file (never from the command line, where `ps` shows it), and paho's
reconnect with backoff (1 s doubling to `max_backoff_s`).

paho-mqtt is the optional extra `trt-edge-runner[mqtt]`: it is imported only here, inside
the function, so a device without it still starts every other command.
"""

from __future__ import annotations

import argparse
import socket
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from trt_edge_runner.errors import Where
from trt_edge_runner.link.errors import LinkConfigError

if TYPE_CHECKING:
    from paho.mqtt.client import Client

DEFAULT_PORT = 8883  # MQTT over TLS (IANA)
KEEPALIVE_S = 30


@dataclass(frozen=True)
class BrokerSettings:
    host: str
    port: int
    ca_file: Path | None = None
    cert_file: Path | None = None
    key_file: Path | None = None
    username: str | None = None
    password: str | None = None
    max_backoff_s: int = 30

    def __str__(self) -> str:
        return f"{'mqtts' if self.ca_file else 'mqtt'}://{self.host}:{self.port}"


def add_broker_arguments(parser: argparse.ArgumentParser) -> None:
    """`--broker HOST[:PORT]` and the TLS and credential flags, shared by every MQTT command."""
    parser.add_argument(
        "--broker", required=True, metavar="HOST[:PORT]", help=f"the broker (port {DEFAULT_PORT})"
    )
    parser.add_argument("--ca-file", type=Path, help="CA certificate that signed the broker's")
    parser.add_argument("--cert-file", type=Path, help="client certificate (when the broker asks)")
    parser.add_argument("--key-file", type=Path, help="the client certificate's private key")
    parser.add_argument("--username", help="the name the broker knows this client by")
    parser.add_argument(
        "--password-file", type=Path, help="file holding the password (its first line)"
    )


def _readable(path: Path | None, option: str, what: str) -> Path | None:
    if path is not None and not path.is_file():
        raise LinkConfigError(
            f"{what} is not there (or not a file)",
            where=Where(path, option=option),
            hint="pass the file `trt-edge fleet broker-config` wrote",
        )
    return path


def broker_settings(args: argparse.Namespace) -> BrokerSettings:
    """The flags of `add_broker_arguments` as settings; LinkConfigError naming the flag."""
    host, _, port_text = str(args.broker).rpartition(":")
    if not host:
        host, port_text = port_text, str(DEFAULT_PORT)
    if not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise LinkConfigError(
            "not HOST or HOST:PORT with a port 1-65535",
            where=Where(option="--broker", value=args.broker),
        )
    password = None
    password_file = _readable(args.password_file, "--password-file", "the password file")
    if password_file is not None:
        lines = password_file.read_text(encoding="utf-8").splitlines()
        password = lines[0] if lines else ""
    if (args.cert_file is None) != (args.key_file is None):
        given, missing = (
            ("--cert-file", "--key-file")
            if args.key_file is None
            else ("--key-file", "--cert-file")
        )
        raise LinkConfigError(
            f"{given} without {missing}: a client certificate needs its key",
            hint="pass both --cert-file and --key-file, or neither",
        )
    return BrokerSettings(
        host=host,
        port=int(port_text),
        ca_file=_readable(args.ca_file, "--ca-file", "the CA certificate"),
        cert_file=_readable(args.cert_file, "--cert-file", "the client certificate"),
        key_file=_readable(args.key_file, "--key-file", "the client key"),
        username=args.username,
        password=password,
    )


def _without_nagle(client: object, userdata: object, sock: object) -> None:
    """Send each packet at once: a command, its ack and the state that follows are small and
    answer each other, and Nagle's algorithm against the peer's delayed ACK held each for
    about 40 ms (bench_mqtt.py: 88 ms a round trip before, on loopback)."""
    if isinstance(sock, socket.socket):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def connect_client(
    settings: BrokerSettings,
    client_id: str,
    *,
    persistent: bool,
    will: tuple[str, bytes] | None = None,
    callbacks: Callable[[Client], None] | None = None,
) -> Client:
    """A paho client connecting to the broker in its own thread, reconnecting with backoff.

    `persistent` keeps the broker's session across disconnects (MQTT 3.1.1 clean_session
    false): QoS 1 commands sent while a device was away wait for it. `will` (topic,
    payload) is published, retained, by the broker when the client vanishes. `callbacks`
    sets the client's callbacks before the first connection can complete.
    """
    try:
        import paho.mqtt.client as mqtt
        from paho.mqtt.enums import CallbackAPIVersion
    except ImportError:
        raise LinkConfigError(
            "paho-mqtt is not installed: the MQTT link needs it",
            hint="pip install 'trt-edge-runner[mqtt]'",
        ) from None

    client = mqtt.Client(
        CallbackAPIVersion.VERSION2,
        client_id=client_id,
        clean_session=not persistent,
        protocol=mqtt.MQTTv311,
    )
    if settings.ca_file is not None:
        client.tls_set(
            ca_certs=str(settings.ca_file),
            certfile=None if settings.cert_file is None else str(settings.cert_file),
            keyfile=None if settings.key_file is None else str(settings.key_file),
        )
    if settings.username is not None:
        client.username_pw_set(settings.username, settings.password)
    if will is not None:
        client.will_set(will[0], will[1], qos=1, retain=True)
    client.reconnect_delay_set(1, settings.max_backoff_s)
    if callbacks is not None:
        callbacks(client)
    client.on_socket_open = _without_nagle
    client.connect_async(settings.host, settings.port, keepalive=KEEPALIVE_S)
    client.loop_start()
    return client
