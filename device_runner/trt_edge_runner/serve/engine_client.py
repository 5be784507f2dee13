"""One `trt-edge-run serve --bundle DIR` child and the JSON-lines pipe to it.

Why a child process: a fatal signal inside ExecuTorch ends the engine, not the service; the
parent sees EOF and the exit status (docs/engine-protocol.md). This module only talks the
protocol: start the engine and wait for its `ready` line, send requests with fresh ids,
route each event line to the request it names, and when the pipe ends fail every request
in flight with `EngineDied` naming the exit status or signal. Every line is decoded once,
here, into the typed event of `engine_events` (its schema first): the layers above read
attributes, never the engine's dicts. What to do about a death (restart, backoff) is the
supervisor's job.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import itertools
import json
import logging
import os
import signal
from collections.abc import AsyncGenerator, Mapping
from pathlib import Path
from typing import Any, Protocol

from trt_edge_runner.errors import TrtEdgeError
from trt_edge_runner.serve.engine_events import (
    Done,
    EngineInfo,
    EngineProtocolError,
    Event,
    Failure,
    Token,
    decode_event,
    decode_ready,
)

LOG = logging.getLogger("trt_edge_runner.serve.engine")
# An infer answer carries whole output tensors base64-encoded on one line.
LINE_LIMIT = 256 * 1024 * 1024
STOP_TIMEOUT_S = 10.0


class EngineError(TrtEdgeError):
    """Base of what the engine client raises (the service turns each into an HTTP status)."""


class EngineStartError(EngineError):
    """The engine could not open, verify or load the bundle (its error document's message)."""


class EngineDied(EngineError):
    """The engine process ended while requests were in flight; the message says how."""


class EngineRequestError(EngineError):
    """The engine answered a request with an `error` event (kind, message, field)."""

    def __init__(self, kind: str, message: str, field: str | None) -> None:
        super().__init__(message)
        self.kind = kind
        self.field = field


class TokenConstraint(Protocol):
    """What a constrained generation follows (serve.structured_output.GrammarConstraint): the
    ids the next token may be, and each token the engine took."""

    def allowed(self) -> bytes: ...

    def accept(self, token: int) -> None: ...


class EngineBrokeProtocol(EngineError):
    """An engine line broke its schema (engine_events): the request it named fails."""


def describe_exit(pid: int, returncode: int | None) -> str:
    """`trt-edge-run (pid 12) was killed by SIGKILL` / `exited with code 3`."""
    if returncode is None:
        return f"trt-edge-run (pid {pid}) closed its output"
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"trt-edge-run (pid {pid}) was killed by {name}"
    return f"trt-edge-run (pid {pid}) exited with code {returncode}"


class EngineProcess:
    """A started, ready engine. Use `start`; `request` yields one request's events."""

    def __init__(self, process: asyncio.subprocess.Process, info: EngineInfo) -> None:
        self._process = process
        self.info = info
        self._ids = itertools.count(1)
        self._inflight: dict[str, _Inflight] = {}
        self._write_lock = asyncio.Lock()
        self._background: set[asyncio.Task[None]] = set()
        self.death: str | None = None
        self.ended = asyncio.Event()
        self._reader = asyncio.create_task(self._read_events())
        self._stderr = asyncio.create_task(_forward_stderr(process))

    @property
    def pid(self) -> int:
        return self._process.pid

    @classmethod
    async def start(
        cls,
        runner: Path,
        bundle: Path,
        *,
        verify: bool = True,
        single_thread: bool = False,
        env: Mapping[str, str] | None = None,
    ) -> EngineProcess:
        """Start the engine on `bundle` and wait for `ready`; EngineStartError otherwise."""
        argv = [str(runner), "serve", "--bundle", str(bundle)]
        if not verify:
            argv.append("--no-verify")
        if single_thread:
            argv.append("--single-thread")
        try:
            process = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                limit=LINE_LIMIT,
                env={**os.environ, **(env or {})},
                start_new_session=True,  # a Ctrl-C to the service is the service's to handle
            )
        except OSError as exc:
            raise EngineStartError(f"{runner}: cannot start the engine: {exc}") from None
        assert process.stdout is not None
        line = await process.stdout.readline()
        doc = _parse(line)
        if doc is None or doc.get("event") != "ready":
            stderr = b""
            if process.stderr is not None:
                with contextlib.suppress(asyncio.TimeoutError):
                    stderr = await asyncio.wait_for(process.stderr.read(), 5.0)
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            code = await process.wait()
            raise EngineStartError(_start_failure(bundle, doc, stderr, process.pid, code))
        try:
            info = decode_ready(doc)
        except EngineProtocolError as exc:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await process.wait()
            raise EngineStartError(f"{bundle}: {exc}; is {runner} of this release?") from None
        return cls(process, info)

    async def _read_events(self) -> None:
        stdout = self._process.stdout
        assert stdout is not None
        try:
            while True:
                try:
                    line = await stdout.readline()
                except (ValueError, asyncio.LimitOverrunError):  # a line past LINE_LIMIT
                    LOG.error("engine pid %s wrote a line past %d bytes", self.pid, LINE_LIMIT)
                    self.kill()
                    break
                if not line:
                    break
                doc = _parse(line)
                if doc is None:
                    LOG.warning("engine pid %s wrote a non-protocol line: %r", self.pid, line)
                    continue
                inflight = self._inflight.get(str(doc.get("id")))
                if inflight is None:
                    continue  # a mask's `done`, or a request given up on
                event = inflight.put(doc)
                if isinstance(event, Token) and inflight.constraint is not None:
                    await self._next_mask(inflight, event)
        finally:
            code = await self._process.wait()
            self.death = describe_exit(self.pid, code)
            for inflight in self._inflight.values():
                inflight.queue.put_nowait(EngineDied(self.death))
            self.ended.set()

    async def _send(self, doc: Mapping[str, Any]) -> None:
        stdin = self._process.stdin
        if self.ended.is_set() or stdin is None:
            raise EngineDied(self.death or describe_exit(self.pid, self._process.returncode))
        async with self._write_lock:
            try:
                stdin.write(json.dumps(doc, separators=(",", ":")).encode() + b"\n")
                await stdin.drain()
            except (BrokenPipeError, ConnectionResetError):
                await self.ended.wait()
                raise EngineDied(self.death or "trt-edge-run closed its input") from None

    async def _next_mask(self, inflight: _Inflight, token: Token) -> None:
        """After token i of a constrained generation: the grammar follows it, and the mask for
        token i + 1 goes at once (the engine waits for it). A mask after the last token (the
        engine stopped at eos or max_new_tokens meanwhile) is dropped by the engine."""
        assert inflight.constraint is not None and inflight.request_id is not None
        try:
            inflight.constraint.accept(token.token)
            allowed = inflight.constraint.allowed()
        except Exception as exc:  # the grammar refused the token: fail the request
            LOG.error("constrained request %s: %s", inflight.request_id, exc)
            inflight.queue.put_nowait(EngineBrokeProtocol(str(exc)))
            return
        with contextlib.suppress(EngineDied):
            await self._send(_mask(inflight.request_id, token.index + 1, allowed))

    async def request(self, op: str, body: Mapping[str, Any]) -> AsyncGenerator[Token | Done, None]:
        """Send one request; yield its events up to and including `done` (see `batches`)."""
        async with contextlib.aclosing(self.batches(op, body)) as batches:
            async for batch in batches:
                for event in batch:
                    yield event

    async def batches(
        self, op: str, body: Mapping[str, Any], constraint: TokenConstraint | None = None
    ) -> AsyncGenerator[list[Token | Done], None]:
        """Send one request; yield its events up to and including `done`, in batches.

        A batch is every event of the request that has arrived by the time the caller asks
        (at least one): a caller slower than the engine (a loaded machine) then handles the
        tokens that piled up in one go instead of one event-loop turn each, so it catches up
        instead of falling further behind. An `error` event raises EngineRequestError (after
        the events before it are yielded); the engine's death raises EngineDied, a line that
        breaks its schema EngineBrokeProtocol. Leaving the iteration early (the caller was
        cancelled, the client went away) sends a `cancel` for the request, so the engine
        stops at its next token.

        With a `constraint` (a generate), the request is sent `constrained` and the engine
        waits before each token for the mask the constraint gives (`_next_mask`).
        """
        request_id = f"r{next(self._ids)}"
        inflight = _Inflight(op, request_id, constraint)
        self._inflight[request_id] = inflight
        finished = False
        try:
            if constraint is None:
                await self._send({**body, "id": request_id, "op": op})
            else:
                first = constraint.allowed()
                await self._send({**body, "id": request_id, "op": op, "constrained": True})
                await self._send(_mask(request_id, 0, first))
            while True:
                batch: list[Token | Done] = []
                failure: EngineError | None = None
                item = await inflight.queue.get()
                while True:
                    if isinstance(item, EngineError):
                        failure = item
                    elif isinstance(item, Failure):
                        failure = EngineRequestError(item.kind, item.message, item.field)
                    else:
                        batch.append(item)
                        finished = not isinstance(item, Token)
                    if failure is not None or finished or inflight.queue.empty():
                        break
                    item = inflight.queue.get_nowait()
                finished = finished or failure is not None
                if batch:
                    yield batch
                if failure is not None:
                    raise failure
                if finished:
                    return
        finally:
            if not finished and not self.ended.is_set():
                # In the background: the caller (cancelled, or past its deadline) must not
                # wait for the engine to reach its next token.
                task = asyncio.create_task(self._cancel(request_id, inflight))
                self._background.add(task)
                task.add_done_callback(self._background.discard)
            else:
                self._inflight.pop(request_id, None)

    async def _cancel(self, target: str, inflight: _Inflight) -> None:
        """Cancel `target` and consume its events up to its terminal one."""
        cancel_id = f"c{next(self._ids)}"
        self._inflight[cancel_id] = _Inflight("cancel")
        try:
            await self._send({"id": cancel_id, "op": "cancel", "target": target})
            while True:
                item = await inflight.queue.get()
                if not isinstance(item, Token):
                    return
        except EngineError:
            return
        finally:
            self._inflight.pop(cancel_id, None)
            self._inflight.pop(target, None)

    async def call(self, op: str, body: Mapping[str, Any]) -> Done:
        """One request whose only event that matters is its `done` (infer, ping)."""
        async for event in self.request(op, body):
            if not isinstance(event, Token):
                return event
        raise EngineBrokeProtocol(f"the engine ended a {op} request without a done event")

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            self._process.kill()

    async def stop(self) -> None:
        """Close the engine's input (it exits 0), killing it if it does not within a while."""
        if not self.ended.is_set() and self._process.stdin is not None:
            with contextlib.suppress(OSError):
                self._process.stdin.close()
            try:
                await asyncio.wait_for(self.ended.wait(), STOP_TIMEOUT_S)
            except asyncio.TimeoutError:
                self.kill()
        await self.ended.wait()
        await self._stderr


class _Inflight:
    """A request awaiting events: its op (which `done` schema applies), its queue, and the
    constraint a constrained generation follows."""

    def __init__(
        self, op: str, request_id: str | None = None, constraint: TokenConstraint | None = None
    ) -> None:
        self.op = op
        self.request_id = request_id
        self.constraint = constraint
        self.queue: asyncio.Queue[Event | EngineError] = asyncio.Queue()

    def put(self, doc: Mapping[str, Any]) -> Event | None:
        """`doc` decoded as an event of this request and queued (None: the protocol break it
        is, queued instead)."""
        try:
            event = decode_event(doc, self.op)
        except EngineProtocolError as exc:
            LOG.error("%s", exc)
            self.queue.put_nowait(EngineBrokeProtocol(str(exc)))
            return None
        self.queue.put_nowait(event)
        return event


def _mask(target: str, index: int, allowed: bytes) -> dict[str, Any]:
    return {
        "id": f"m{target}.{index}",
        "op": "mask",
        "target": target,
        "index": index,
        "allowed": base64.b64encode(allowed).decode(),
    }


def _parse(line: bytes) -> dict[str, Any] | None:
    try:
        doc = json.loads(line)
    except ValueError:
        return None
    return doc if isinstance(doc, dict) else None


def _start_failure(
    bundle: Path, doc: dict[str, Any] | None, stderr: bytes, pid: int, code: int
) -> str:
    if doc is not None and doc.get("error"):
        return f"{bundle}: the engine did not load the bundle: {doc['error']}"
    tail = stderr.decode(errors="replace").strip().splitlines()[-3:]
    detail = f" ({' | '.join(tail)})" if tail else ""
    return f"{bundle}: the engine did not start: {describe_exit(pid, code)}{detail}"


async def _forward_stderr(process: asyncio.subprocess.Process) -> None:
    """The engine's log lines into this service's log, tagged with its pid."""
    if process.stderr is None:
        return
    while True:
        try:
            line = await process.stderr.readline()
        except (ValueError, asyncio.LimitOverrunError):
            continue
        if not line:
            return
        LOG.info("engine %s: %s", process.pid, line.decode(errors="replace").rstrip())
