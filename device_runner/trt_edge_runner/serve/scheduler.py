"""Who runs next: `slots` requests in the engine, a bounded queue before them, a deadline each.

The engine serves one request at a time (one loaded method, one KV cache), or — on a bundle
built with `runtime.slots` N — up to N at once, each in its own slot, decoded together
(continuous batching, docs/serving.md). A request beyond those running waits here, first
come first served; when `max_queue` already wait, it is
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
    """FIFO turns in front of one engine: `slots` held at once, `max_queue` waiting places."""

    def __init__(
        self,
        max_queue: int,
        timeout_s: float,
        on_depth: Callable[[int], None] = lambda depth: None,
        slots: int = 1,
    ) -> None:
        self.max_queue = max_queue
        self.timeout_s = timeout_s
        self.slots = slots
        # FIFO: asyncio's semaphore wakes its waiters in the order they came.
        self._turn = asyncio.Semaphore(slots)
        self._active = 0
        self._holding = 0
        self._idle = asyncio.Event()
        self._idle.set()
        self._on_depth = on_depth

    @property
    def waiting(self) -> int:
        """Requests admitted but not yet holding the engine (the queue depth)."""
        return self._active - self._holding

    @property
    def active(self) -> int:
        """Requests holding or waiting for a turn (what a drain waits for)."""
        return self._active

    def deadline(self) -> float:
        """The monotonic time a request arriving now must be answered by."""
        return time.monotonic() + self.timeout_s

    @asynccontextmanager
    async def turn(self, deadline: float) -> AsyncIterator[None]:
        """Wait for a turn (503 when the queue is full, 504 past `deadline`), hold it."""
        if self._active >= self.max_queue + self.slots:
            raise ApiError(
                503,
                f"the service is busy: {self.waiting} requests already wait "
                f"(--max-queue {self.max_queue}); retry later",
                outcome=REJECTED,
                kind="server_busy",
                headers={"Retry-After": str(RETRY_AFTER_S)},
            )
        self._change(+1, 0)
        try:
            try:
                await asyncio.wait_for(self._turn.acquire(), max(0.0, deadline - time.monotonic()))
            except asyncio.TimeoutError:
                raise deadline_error(self.timeout_s, "waiting in the queue") from None
            self._change(0, +1)
            try:
                yield
            finally:
                self._change(0, -1)
                self._turn.release()
        finally:
            self._change(-1, 0)

    def _change(self, active: int, holding: int) -> None:
        self._active += active
        self._holding += holding
        self._on_depth(self.waiting)
        if self._active == 0:
            self._idle.set()
        else:
            self._idle.clear()

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
