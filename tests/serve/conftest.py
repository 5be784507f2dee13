"""The service under test: real `trt-edge-device serve` processes over the real C++ engine.

Each test module starts the services it needs once (module-scoped) on a free loopback port
and stops them after; bundles are the LLM tests' minis (built once per session, re-exported
from tests/llm/conftest.py). `Served` knows its process, so tests can find the engine child
(to signal it) and count file descriptors.
"""

from __future__ import annotations

import array
import fcntl
import json
import os
import signal
import socket
import subprocess
import sys
import termios
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.helpers.waits import wait_until
from tests.llm.conftest import llm_root, mini_bundle, mini_project

__all__ = ["llm_root", "mini_bundle", "mini_project"]  # fixtures used here, defined there

READY_TIMEOUT_S = 180.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def children(pid: int) -> list[int]:
    """Direct children of `pid` (Linux /proc)."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        text = (task / "children").read_text().split()
        found.extend(int(t) for t in text)
    return found


@dataclass
class Served:
    """One running service."""

    url: str
    process: subprocess.Popen[bytes]
    log: Path

    def engines(self) -> list[int]:
        """PIDs of the trt-edge-run children (the engines) of the service."""
        return [
            pid
            for pid in children(self.process.pid)
            if Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].endswith(b"trt-edge-run")
        ]

    def engine(self) -> int:
        engines = self.engines()
        assert len(engines) == 1, engines
        return engines[0]

    def open_fds(self) -> int:
        return len(os.listdir(f"/proc/{self.process.pid}/fd"))

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")

    def probe(self, path: str, url: str | None = None, **options: Any) -> int:
        """The HTTP status `path` answers (at `url`, default the service's); fails the test at
        once when the service has exited."""
        if self.process.poll() is not None:
            pytest.fail(f"the service exited {self.process.returncode}:\n{self.log_text()}")
        return httpx.get(f"{url or self.url}{path}", timeout=5, **options).status_code

    def wait_ready(self, timeout_s: float = READY_TIMEOUT_S) -> None:
        wait_until(
            lambda: self.probe("/v2/health/ready"),
            "the service ready (/v2/health/ready 200)",
            until=lambda status: status == 200,
            timeout_s=timeout_s,
            ignoring=(httpx.HTTPError,),
            context=self.log_text,
        )

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def unread_input(pid: int) -> int:
    """Bytes written to process `pid`'s stdin pipe that it has not read yet (FIONREAD on
    the pipe, reached through /proc; nothing is consumed)."""
    fd = os.open(f"/proc/{pid}/fd/0", os.O_RDONLY | os.O_NONBLOCK)
    try:
        count = array.array("i", [0])
        fcntl.ioctl(fd, termios.FIONREAD, count)
        return count[0]
    finally:
        os.close(fd)


def start_service(
    runner: Path, args: Sequence[str | Path], log: Path, env: dict[str, str] | None = None
) -> Served:
    """`trt-edge-device serve ARGS` on a free port, not yet waited for."""
    port = free_port()
    argv = [sys.executable, "-m", "trt_edge_runner.device_cli", "serve", "--port", str(port)]
    argv += ["--runner", str(runner), *map(str, args)]
    handle = log.open("wb")
    process = subprocess.Popen(
        argv, stdout=handle, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})}
    )
    handle.close()
    return Served(f"http://127.0.0.1:{port}", process, log)


@pytest.fixture(scope="module")
def serve_bundle(
    trt_edge_run: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Callable[..., Served]]:
    """`serve_bundle(BUNDLE, *extra_args)`: a ready service of BUNDLE, stopped after the module."""
    started: list[Served] = []

    def serve(bundle: Path, *extra: str) -> Served:
        log = tmp_path_factory.mktemp("serve") / "service.log"
        served = start_service(trt_edge_run, ["--bundle", bundle, *extra], log)
        started.append(served)
        served.wait_ready()
        return served

    yield serve
    for served in started:
        served.stop()


@pytest.fixture(scope="module")
def bundle(mini_bundle: Callable[[str], Path]) -> Path:
    """The bundle a module serves unless it says otherwise: the mini Gemma-3 (built once)."""
    return mini_bundle("gemma3")


@pytest.fixture(scope="module")
def served(serve_bundle: Callable[..., Served], bundle: Path) -> Served:
    """`bundle` served with the default settings, for the module (a module needing other
    settings or another bundle overrides this)."""
    return serve_bundle(bundle)


def bundle_doc(bundle: Path) -> dict[str, Any]:
    """The bundle's `bundle.json` (the model name requests carry, the LLM facts)."""
    doc: dict[str, Any] = json.loads((bundle / "bundle.json").read_text())
    return doc


def metric(text: str, metric_name: str, **labels: str) -> float:
    """The value of one sample in Prometheus text (0 when absent)."""
    want = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        key, _, value = line.rpartition(" ")
        if key == metric_name and not want:
            return float(value)
        if key.startswith(metric_name + "{"):
            got = ",".join(sorted(key[len(metric_name) + 1 : -1].split(",")))
            if got == want:
                return float(value)
    return 0.0
