"""A device's link, `trt-edge-device mqtt`, as a real process over a real agent root."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from tests.helpers.waits import wait_for_line
from tests.pull.broker import FLEET, Broker


@dataclass
class Link:
    device: str
    root: Path
    log: Path
    process: subprocess.Popen[bytes]
    connects: int = field(default=1)

    def wait_connected(self, count: int = 1) -> None:
        """Wait until the link said it connected `count` times (its log is the event)."""
        at = 0
        for _ in range(count):
            at = wait_for_line(self.log, "connected; taking commands", after=at)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            self.process.wait(timeout=60)


def start_link(broker: Broker, device: str, root: Path, env: dict[str, str], *extra: str) -> Link:
    log = root.parent / f"{device}-link.log"
    root.mkdir(parents=True, exist_ok=True)
    with log.open("ab") as out:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "trt_edge_runner.device_cli",
                "mqtt",
                *broker.flags(device),
                "--fleet",
                FLEET,
                "--device",
                device,
                "--root",
                str(root),
                "--every",
                "1",
                *extra,
            ],
            env={**os.environ, **env},
            stdout=out,
            stderr=out,
        )
    link = Link(device, root, log, process)
    link.wait_connected()
    return link
