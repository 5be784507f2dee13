"""A real mosquitto on a free loopback port, set up by `trt-edge fleet broker-config`.

Started by the tests themselves (no service of CI's): `broker` in conftest.py is one per
session; a test that restarts its broker makes its own (`start_broker`). Without mosquitto
the tests skip locally and fail in CI (`skip_or_fail`, the rule the Docker tests follow;
.ci/sysdeps installs it).
"""

from __future__ import annotations

import getpass
import os
import shutil
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path

from trt_edge.fleet.mqtt.broker_config import BrokerFiles, BrokerPlan, write_broker_config
from trt_edge_runner.link.broker import BrokerSettings

from tests.helpers.fixtures_docker import skip_or_fail
from tests.helpers.waits import wait_for_line

FLEET = "lab"
DEVICES = ("d1", "d2", "d3", "d4", "d5", "d6", "p1", "p2", "p3", "p4", "p5")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def mosquitto_binary() -> str:
    found = shutil.which("mosquitto") or shutil.which("mosquitto", path="/usr/sbin:/sbin")
    if found is None:
        skip_or_fail("mosquitto is not installed (Debian: apt-get install mosquitto)")
        raise AssertionError("unreachable")
    return found


@dataclass
class Broker:
    """A running mosquitto and what a client needs to reach it."""

    files: BrokerFiles
    port: int
    log: Path
    address: str = "127.0.0.1"  # where it listens and what its certificate names
    process: subprocess.Popen[bytes] | None = None

    def settings(self, user: str, *, ca: bool = True) -> BrokerSettings:
        return BrokerSettings(
            host=self.address,
            port=self.port,
            ca_file=self.files.tls.ca_cert if ca else None,
            username=user,
            password=self.password(user),
            max_backoff_s=2,
        )

    def password(self, user: str) -> str:
        return self.files.credentials[user].read_text(encoding="utf-8").strip()

    def flags(self, user: str) -> list[str]:
        """The command-line flags of a trt-edge program connecting as `user`."""
        return [
            "--broker",
            f"{self.address}:{self.port}",
            "--ca-file",
            str(self.files.tls.ca_cert),
            "--username",
            user,
            "--password-file",
            str(self.files.credentials[user]),
        ]

    def start(self) -> None:
        offset = self.log.stat().st_size if self.log.exists() else 0
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                [mosquitto_binary(), "-c", str(self.files.config)], stdout=log, stderr=log
            )
        wait_for_line(self.log, " running", after=offset)

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=30)
            self.process = None


def start_broker(
    folder: Path, devices: tuple[str, ...] = DEVICES, address: str = "127.0.0.1"
) -> Broker:
    """Write a set-up for FLEET's `devices` into `folder` and start mosquitto on it, listening
    on `address` (loopback by default) with a certificate for that address."""
    mosquitto_binary()
    port = free_port()
    files = write_broker_config(
        BrokerPlan(
            folder=folder,
            fleet=FLEET,
            devices=devices,
            port=port,
            bind=address,
            hosts=(address,),
            run_as=getpass.getuser() if os.geteuid() == 0 else None,
        )
    )
    broker = Broker(files, port, folder / "mosquitto.log", address)
    broker.start()
    return broker
