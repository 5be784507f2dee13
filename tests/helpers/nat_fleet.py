"""A pull fleet on one machine: a registry and a broker on the operator's side, and devices
that each live in their own outbound-only network namespace (`tests/helpers/netns.py`),
running the real device programs there — `trt-edge-device follow` (the channel, polled) and
`trt-edge-device mqtt` (reports and commands) — over a real agent root.

The operator's services listen on one service address, `10.237.0.1`, put on the root
namespace's loopback for the test's life: every device reaches it through its default route
(its veth link), the way field devices reach `registry.example` through their NAT, and the
operator's own commands reach it locally. Nothing reaches a device.

Used by `tests/pull/test_nat_fleet.py` and `benchmarks/bench_fleet_pull.py --rollout`.
"""

from __future__ import annotations

import contextlib
import json
import signal
import subprocess
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from tests.agent.device import Device, device_in
from tests.helpers.netns import SUBNET, OutboundOnlyHost
from tests.helpers.waits import wait_for_line
from tests.pull.broker import FLEET, Broker

SERVICE_ADDRESS = f"{SUBNET}.0.1"


@contextlib.contextmanager
def service_address() -> Iterator[str]:
    """`SERVICE_ADDRESS` on the root namespace's loopback until the block ends."""
    shown = subprocess.run(
        ["ip", "-o", "addr", "show", "dev", "lo"], capture_output=True, text=True
    )
    added = f" {SERVICE_ADDRESS}/" not in shown.stdout
    if added:
        subprocess.run(
            ["ip", "addr", "add", f"{SERVICE_ADDRESS}/32", "dev", "lo"],
            check=True,
            capture_output=True,
        )
    try:
        yield SERVICE_ADDRESS
    finally:
        if added:
            subprocess.run(
                ["ip", "addr", "del", f"{SERVICE_ADDRESS}/32", "dev", "lo"], capture_output=True
            )


@dataclass
class NatDevice:
    """One namespaced device: its network, its agent, its running programs and their logs."""

    name: str
    host: OutboundOnlyHost
    agent: Device
    folder: Path
    follower: subprocess.Popen[bytes] | None = None
    link: subprocess.Popen[bytes] | None = None
    _logs: list[IO[bytes]] = field(default_factory=list)

    def command(self, args: Sequence[str]) -> list[str]:
        """A device command line, run inside the device's namespace."""
        return self.host.command(self.agent.cli(*args))

    def _start(self, what: str, args: Sequence[str]) -> subprocess.Popen[bytes]:
        log = (self.folder / f"{what}.log").open("ab")
        self._logs.append(log)
        return subprocess.Popen(self.command(args), env=self.agent.env(), stdout=log, stderr=log)

    @property
    def follower_log(self) -> Path:
        return self.folder / "follow.log"

    @property
    def link_log(self) -> Path:
        return self.folder / "link.log"

    def start_follower(self, reference: str, *extra: str) -> None:
        """`follow REFERENCE` polling every second (plain http: the test registry has no TLS)."""
        args = ["follow", reference, "--interval-s", "1", "--max-backoff-s", "4", "--plain-http"]
        self.follower = self._start("follow", [*args, "--smoke-runs", "1", *extra])

    def stop_follower(self) -> None:
        """The device goes offline for the channel (SIGTERM, as systemd stops it)."""
        _stop(self.follower)
        self.follower = None

    def start_link(self, broker: Broker, *extra: str) -> None:
        """`mqtt`, reporting health on every version change; waits until it is connected."""
        offset = self.link_log.stat().st_size if self.link_log.exists() else 0
        args = [
            "mqtt", *broker.flags(self.name), "--fleet", FLEET, "--device", self.name,
            "--root", str(self.agent.root), "--every", "1", "--health", *extra,
        ]  # fmt: skip
        self.link = self._start("link", args)
        wait_for_line(self.link_log, "connected; taking commands", after=offset)

    def restart_link(self, broker: Broker, *extra: str) -> None:
        """The link again (it reads device.json's health settings when it starts)."""
        _stop(self.link)
        self.start_link(broker, *extra)

    def status(self) -> dict[str, object]:
        done = subprocess.run(
            self.command(["status", "--json"]),
            env=self.agent.env(),
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        doc: dict[str, object] = json.loads(done.stdout)
        return doc

    def follower_state(self) -> dict[str, object]:
        path = self.agent.root / "follow" / "state.json"
        doc: dict[str, object] = json.loads(path.read_bytes()) if path.is_file() else {}
        return doc

    def stop(self) -> None:
        _stop(self.link)
        _stop(self.follower)
        self.link = self.follower = None
        for log in self._logs:
            log.close()


def _stop(process: subprocess.Popen[bytes] | None) -> None:
    if process is None or process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def nat_device(
    name: str,
    host: OutboundOnlyHost,
    folder: Path,
    keys: Path,
    runner: Path,
    *,
    latency_budget_ms: float | None = None,
) -> NatDevice:
    """A device in `folder` behind `host`'s namespace; `latency_budget_ms` set tiny makes
    every health check fail (a device that fails its gate on purpose)."""
    agent = device_in(folder, keys, runner, root="agent-root")
    if latency_budget_ms is not None:
        budget = {"health": {"latency_budget_ms": latency_budget_ms}}
        agent.config.write_text(json.dumps(budget))
    agent.root.mkdir(parents=True, exist_ok=True)
    return NatDevice(name, host, agent, folder)


def publish(bundle: Path, reference: str, *tags: str) -> None:
    """`trt-edge publish` from the operator's side (plain http to the service address)."""
    import sys

    argv = [sys.executable, "-m", "trt_edge", "publish", str(bundle), reference, "--plain-http"]
    for tag in tags:
        argv += ["--tag", tag]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300, check=False)
    if done.returncode != 0:
        raise AssertionError(f"publish {reference}: {done.stdout}{done.stderr}")


def promote(reference: str, channel: str) -> None:
    import sys

    argv = [sys.executable, "-m", "trt_edge", "promote", reference, channel, "--plain-http"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300, check=False)
    if done.returncode != 0:
        raise AssertionError(f"promote {reference} {channel}: {done.stdout}{done.stderr}")
