"""A pull fleet's command round trip over a real mosquitto (TLS, passwords, ACL), side by side.

Measured in one run on loopback, with one real link (`trt-edge-device mqtt`, a process over
an empty agent root): a `hold` command from publish to ack on one open operator session, the
same through `send_command` (which connects, subscribes and does the TLS handshake each
time, as `trt-edge fleet command` does), and the link's resident memory (what it costs a
device). Needs Debian's `mosquitto`. Run: `.venv/bin/python benchmarks/bench_mqtt.py`.
"""

from __future__ import annotations

import getpass
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from itertools import count
from pathlib import Path

from timing import median_seconds
from trt_edge.fleet.mqtt.broker_config import BrokerPlan, write_broker_config
from trt_edge.fleet.mqtt.operator_client import fleet_session, send_command
from trt_edge_runner.link.broker import BrokerSettings
from trt_edge_runner.link.documents import Command

REPEAT = 20


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main() -> int:
    mosquitto = shutil.which("mosquitto") or shutil.which("mosquitto", path="/usr/sbin")
    if mosquitto is None:
        print("mosquitto is not installed (apt-get install mosquitto)", file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="bench-mqtt-"))
    port = free_port()
    files = write_broker_config(
        BrokerPlan(
            folder=work / "broker",
            fleet="bench",
            devices=("dev",),
            port=port,
            bind="127.0.0.1",
            run_as=getpass.getuser() if os.geteuid() == 0 else None,
        )
    )
    broker = subprocess.Popen([mosquitto, "-c", str(files.config)], stderr=subprocess.PIPE)
    link = None
    try:
        assert broker.stderr is not None
        for line in broker.stderr:
            if b" running" in line:
                break
        flags = ["--broker", f"127.0.0.1:{port}", "--ca-file", str(files.tls.ca_cert)]
        flags += ["--username", "dev", "--password-file", str(files.credentials["dev"])]
        link = subprocess.Popen(
            [sys.executable, "-m", "trt_edge_runner.device_cli", "mqtt", *flags,
             "--fleet", "bench", "--device", "dev", "--root", str(work / "root")],
            stderr=subprocess.PIPE,
        )  # fmt: skip
        assert link.stderr is not None
        for line in link.stderr:
            if b"connected" in line:
                break
        operator = BrokerSettings(
            "127.0.0.1",
            port,
            ca_file=files.tls.ca_cert,
            username="operator",
            password=files.credentials["operator"].read_text().strip(),
        )
        ids = count()

        def command() -> Command:
            return Command(f"bench-{next(ids)}", "hold", "2026-12-07T00:00:00Z")

        with fleet_session(operator, "bench") as session:

            def round_trip() -> None:
                sent = command()
                session.send("dev", sent)
                assert session.wait_for(lambda: sent.command_id in session.acks, 30)

            open_session = median_seconds(round_trip, REPEAT, warmup=True)
        fresh = median_seconds(lambda: send_command(operator, "bench", "dev", command()), REPEAT)
        print(
            f"command -> ack, one open operator session: {open_session * 1000:.1f} ms "
            f"(median of {REPEAT})"
        )
        print(
            "command -> ack, a connection per command (trt-edge fleet command): "
            f"{fresh * 1000:.1f} ms"
        )
        print(f"the link's resident memory: {rss_mib(link.pid):.1f} MiB")
    finally:
        if link is not None:
            link.terminate()
            link.wait(timeout=30)
        broker.terminate()
        broker.wait(timeout=30)
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
