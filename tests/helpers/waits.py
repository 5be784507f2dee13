"""Waiting in tests for something the code under test does: a line, an exit, a state.

Prefer an event where the product gives one (a process's output, `threading.Event`, a
callback, Docker's event stream, a pidfd); `wait_until` is the one poll for what can
only be looked at (an HTTP probe, /proc). Every timeout here is a generous upper bound that
only a broken test reaches, never a measured expectation: a test asserts what happened,
not how fast.
"""

from __future__ import annotations

import contextlib
import os
import select
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

TIMEOUT_S = 180.0  # a loaded 2-core machine that starts a service, loads and smoke-runs a model
_INTERVAL_S = 0.05  # between two looks; short, as a look is cheap and the wait ends at once


def wait_until(
    observe: Callable[[], T],
    what: str,
    *,
    until: Callable[[T], bool] = bool,
    timeout_s: float = TIMEOUT_S,
    ignoring: tuple[type[BaseException], ...] = (),
    context: Callable[[], str] | None = None,
) -> T:
    """Look with `observe` until `until(value)` holds (default: the value is truthy); return
    that value. Past `timeout_s`, raise AssertionError naming `what`, the last value seen
    and `context()` (a log, say). `observe` may raise to give up early (a process exited);
    exceptions in `ignoring` count as "not yet" (a server still refusing connections)."""
    deadline = time.monotonic() + timeout_s
    last: object = "(nothing: every look raised)"
    while True:
        try:
            value = observe()
        except ignoring as exc:
            last = f"{type(exc).__name__}: {exc}"
        else:
            if until(value):
                return value
            last = value
        if time.monotonic() >= deadline:
            detail = f"\n{context()}" if context else ""
            raise AssertionError(f"{what}: not within {timeout_s:g} s; last seen {last!r}{detail}")
        time.sleep(_INTERVAL_S)  # the one poll interval of the suite


def wait_for_line(
    path: Path, text: str, *, after: int = 0, timeout_s: float = TIMEOUT_S, what: str = ""
) -> int:
    """Wait until the file at `path` (a service's log) holds `text` past byte `after`;
    return the offset just past the first such occurrence, for a later wait to start at."""

    def found() -> int:
        data = path.read_bytes() if path.exists() else b""
        at = data.find(text.encode(), after)
        return -1 if at < 0 else at + len(text.encode())

    return wait_until(
        found,
        what or f"{text!r} in {path.name}",
        until=lambda at: at >= 0,
        timeout_s=timeout_s,
        context=lambda: path.read_text(errors="replace") if path.exists() else "(no file)",
    )


def read_until(lines: Iterable[str], text: str, what: str) -> list[str]:
    """Read `lines` (a process's output) up to the first that holds `text`; return those read.
    The output ending first (the process exited) fails naming `what` and what was read."""
    seen: list[str] = []
    for line in lines:
        seen.append(line)
        if text in line:
            return seen
    raise AssertionError(f"{what}: the output ended before {text!r}:\n{''.join(seen)}")


def wait_for_exits(pids: Iterable[int], what: str, timeout_s: float = TIMEOUT_S) -> None:
    """Wait for processes that need not be this one's children to exit (Linux pidfds: the
    kernel says when, nothing is polled). A pid already gone counts as exited."""
    fds: list[int] = []
    try:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                fds.append(os.pidfd_open(pid))
        deadline = time.monotonic() + timeout_s
        pending = list(fds)
        while pending:
            left = deadline - time.monotonic()
            ready, _, _ = select.select(pending, [], [], max(0.0, left))
            if not ready:
                raise AssertionError(f"{what}: {len(pending)} still running after {timeout_s:g} s")
            pending = [fd for fd in pending if fd not in ready]
    finally:
        for fd in fds:
            os.close(fd)
