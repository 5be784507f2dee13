"""A test client of `trt-edge-run --serve` (docs/engine-protocol.md): the real binary over
pipes, one JSON object per line each way.

Events are read by a thread into a queue, so a test waits for an event with a timeout
instead of blocking forever on a pipe when the engine misbehaves.
"""

from __future__ import annotations

import json
import queue
import subprocess
import threading
from pathlib import Path
from typing import IO, Any

EVENT_TIMEOUT_S = 120.0


class Engine:
    """One engine process; `request` sends a request and returns its events to the terminal one."""

    def __init__(self, binary: Path, bundle: Path, *extra: str) -> None:
        self.process = subprocess.Popen(
            [str(binary), "--bundle", str(bundle), "--serve", *extra],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self._events: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.stderr: list[str] = []
        self.aside: list[dict[str, Any]] = []  # other requests' events seen while waiting
        self._threads = [
            threading.Thread(target=self._read, args=(self.process.stdout,), daemon=True),
            threading.Thread(target=self._drain, args=(self.process.stderr,), daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    def _read(self, stream: IO[str] | None) -> None:
        assert stream is not None
        for line in stream:
            self._events.put(json.loads(line))
        self._events.put(None)

    def _drain(self, stream: IO[str] | None) -> None:
        assert stream is not None
        self.stderr.extend(stream)

    def event(self) -> dict[str, Any]:
        """The next event; fails the test on EOF or after EVENT_TIMEOUT_S."""
        event = self._events.get(timeout=EVENT_TIMEOUT_S)
        assert event is not None, f"the engine closed stdout: {''.join(self.stderr)}"
        return event

    def send_line(self, line: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()

    def send(self, *requests: dict[str, Any]) -> None:
        """Writes every request in one write, so the engine reads them together."""
        self.send_line("\n".join(json.dumps(r) for r in requests))

    def until_terminal(self, request_id: str) -> list[dict[str, Any]]:
        """Events up to and including `request_id`'s done or error (others' are kept aside)."""
        events = []
        while True:
            event = self.event()
            if event.get("id") != request_id:
                self.aside.append(event)
                continue
            events.append(event)
            if event["event"] in ("done", "error"):
                return events

    def request(self, request: dict[str, Any]) -> list[dict[str, Any]]:
        self.send(request)
        return self.until_terminal(request["id"])

    def close(self, timeout: float = 60.0) -> int:
        """Closes stdin (EOF) and returns the exit code."""
        assert self.process.stdin is not None
        if not self.process.stdin.closed:
            self.process.stdin.close()
        return self.process.wait(timeout=timeout)

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.process.poll() is None:
            self.close()
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()


def terminal(events: list[dict[str, Any]]) -> dict[str, Any]:
    """The terminal event of a request's events."""
    assert events and events[-1]["event"] in ("done", "error"), events
    return events[-1]
