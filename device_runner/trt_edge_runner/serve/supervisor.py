"""Keep one bundle's engine alive: start it, smoke-run it, restart it with backoff when it dies.

A death is an event, not the end of the service: requests in flight already got
`EngineDied` from the engine client; the supervisor counts a restart, waits (0.5 s, doubling
to 30 s while restarts keep failing), starts a new engine and smoke-runs it before any
request reaches it. Meanwhile `current()` answers 503 with `Retry-After`, naming what
happened, so clients retry instead of hanging.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from trt_edge_runner.serve.api_errors import ENGINE_ERROR, ApiError
from trt_edge_runner.serve.engine_client import EngineError, EngineProcess, EngineStartError

LOG = logging.getLogger("trt_edge_runner.serve.supervisor")
FIRST_BACKOFF_S = 0.5
MAX_BACKOFF_S = 30.0
# An engine that served this long resets the backoff: its next death is a fresh incident.
STABLE_S = 60.0

SmokeRun = Callable[[EngineProcess], Awaitable[None]]


class Supervisor:
    """The engine of one bundle and its state (`starting`, `ready`, `restarting`, `stopped`)."""

    def __init__(
        self,
        runner: Path,
        bundle: Path,
        smoke: SmokeRun,
        *,
        verify: bool = True,
        single_thread: bool = False,
        on_restart: Callable[[], None] = lambda: None,
    ) -> None:
        self.runner = runner
        self.bundle = bundle
        self._smoke = smoke
        self._verify = verify
        self._single_thread = single_thread
        self._on_restart = on_restart
        self.engine: EngineProcess | None = None
        self.state = "starting"
        self.last_death: str | None = None
        self._watcher: asyncio.Task[None] | None = None

    async def _start_once(self) -> EngineProcess:
        engine = await EngineProcess.start(
            self.runner, self.bundle, verify=self._verify, single_thread=self._single_thread
        )
        try:
            await self._smoke(engine)
        except (EngineError, ApiError) as exc:
            engine.kill()
            await engine.stop()
            raise EngineStartError(f"{self.bundle}: the smoke run failed: {exc}") from None
        except BaseException:
            engine.kill()
            await engine.stop()
            raise
        return engine

    async def start(self) -> None:
        """The first start: the engine loaded and smoke-run, or the error saying why not."""
        self.engine = await self._start_once()
        self.state = "ready"
        self._watcher = asyncio.create_task(self._watch())

    async def _watch(self) -> None:
        backoff = FIRST_BACKOFF_S
        while True:
            engine = self.engine
            assert engine is not None
            started = time.monotonic()
            await engine.ended.wait()
            if self.state == "stopped":
                return
            self.state = "restarting"
            self.last_death = engine.death
            LOG.error("engine died: %s; restarting", engine.death)
            self._on_restart()
            if time.monotonic() - started > STABLE_S:
                backoff = FIRST_BACKOFF_S
            while self.state != "stopped":
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, MAX_BACKOFF_S)
                try:
                    self.engine = await self._start_once()
                except (EngineError, ApiError, OSError) as exc:
                    self.last_death = f"{self.last_death}; the restart failed too: {exc}"
                    LOG.error("engine restart failed: %s", exc)
                    continue
                self.state = "ready"
                break

    def current(self) -> EngineProcess:
        """The ready engine, or a 503 naming why there is none right now."""
        if self.state == "ready" and self.engine is not None and not self.engine.ended.is_set():
            return self.engine
        why = self.last_death or "it is starting"
        if self.engine is not None and self.engine.ended.is_set():
            why = self.engine.death or why
        raise ApiError(
            503,
            f"the engine is not serving right now ({why}); it is being restarted, retry shortly",
            outcome=ENGINE_ERROR,
            kind="engine_unavailable",
            headers={"Retry-After": "1"},
        )

    async def stop(self) -> None:
        self.state = "stopped"
        if self._watcher is not None:
            self._watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watcher
        if self.engine is not None:
            await self.engine.stop()
