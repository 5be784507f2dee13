"""The test's stand-in for the follower (`trt-edge-device follow`, built elsewhere): it reads
each device's `desired.json` the way the follower does (`read_desired`, on every poll) and,
when a target that is not held differs from what the agent runs, installs the local tar
that reference names through the real agent (`trt-edge-device install`). Only the fetch
from a registry is missing; the install, the state it leaves and what the link reports
are the real ones."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from trt_edge_runner.link.desired import read_desired

from tests.agent.device import Device

POLL_S = 0.1  # the follower polls; so does its stand-in


@contextmanager
def applying(devices: Mapping[str, Device], tars: Mapping[str, Path]) -> Iterator[list[str]]:
    """Apply desired.json on `devices` until the block ends; yields the install log lines."""
    stop = threading.Event()
    done: dict[str, str] = {}  # device -> the command id it last acted on
    log: list[str] = []

    def loop() -> None:
        while not stop.wait(POLL_S):
            for name, device in devices.items():
                desired = read_desired(device.root)
                if desired.hold or desired.target is None:
                    continue
                if done.get(name) == desired.command_id:
                    continue
                done[name] = desired.command_id
                result = device.run("install", str(tars[desired.target.reference]))
                log.append(f"{name}: install {desired.target.version}: exit {result.returncode}")

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    try:
        yield log
    finally:
        stop.set()
        thread.join(timeout=300)
