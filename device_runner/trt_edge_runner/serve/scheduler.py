"""Who runs next: one request in the engine, a bounded queue before it, a deadline for each.

The engine serves one request at a time (one loaded method, one KV cache). A request beyond
the one running waits here, first come first served; when `max_queue` already wait, it is
refused at once with 503 and `Retry-After` (the client backs off instead of piling up
sockets). Each request has a deadline covering its wait and its run; past it the caller gets
504 and the engine is told to stop. `drain` lets a hot swap wait for the last request of an
old model.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from trt_edge_runner.serve.api_errors import DEADLINE, REJECTED, ApiError

RETRY_AFTER_S = 1


class Scheduler:
    """A FIFO turn in front of one engine, with `max_queue` waiting places."""

    def __init__(
        self,
        max_queue: int,
        timeout_s: float,
        on_depth: Callable[[int], None] = lambda depth: None,
    ) -> None:
        self.max_queue = max_queue
        self.timeout_s = timeout_s
        self._turn = asyncio.Lock()
        self._waiting = 0
        self._active = 0
        self._idle = asyncio.Event()
        self._idle.set()
        self._on_depth = on_depth

    @property
    def waiting(self) -> int:
        return self._waiting

    @property
    def active(self) -> int:
        """Requests holding or waiting for a turn (what a drain waits for)."""
        return self._active

    def deadline(self) -> float:
        """The monotonic time a request arriving now must be answered by."""
        return time.monotonic() + self.timeout_s

    @asynccontextmanager
    async def turn(self, deadline: float) -> AsyncIterator[None]:
        """Wait for the engine (503 when the queue is full, 504 past `deadline`), hold it."""
        if self._turn.locked() and self._waiting >= self.max_queue:
            raise ApiError(
                503,
                f"the service is busy: {self._waiting} requests already wait "
                f"(--max-queue {self.max_queue}); retry later",
                outcome=REJECTED,
                kind="server_busy",
                headers={"Retry-After": str(RETRY_AFTER_S)},
            )
        self._enter()
        self._waiting += 1
        self._on_depth(self._waiting)
        try:
            try:
                await asyncio.wait_for(self._turn.acquire(), max(0.0, deadline - time.monotonic()))
            except asyncio.TimeoutError:
                raise deadline_error(self.timeout_s, "waiting in the queue") from None
            finally:
                self._waiting -= 1
                self._on_depth(self._waiting)
            try:
                yield
            finally:
                self._turn.release()
        finally:
            self._leave()

    def _enter(self) -> None:
        self._active += 1
        self._idle.clear()

    def _leave(self) -> None:
        self._active -= 1
        if self._active == 0:
            self._idle.set()

    async def drain(self) -> None:
        """Return once no request holds or waits for a turn."""
        await self._idle.wait()


def deadline_error(timeout_s: float, where: str) -> ApiError:
    """The 504 a request gets when its deadline passes."""
    return ApiError(
        504,
        f"the request did not finish within its deadline of {timeout_s:g} s ({where}); "
        "raise --request-timeout or ask for fewer tokens",
        outcome=DEADLINE,
        kind="timeout",
    )
