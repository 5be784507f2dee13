"""One bundle being served: its engine (supervised), its turn-taking, its text, its metrics.

The routes ask a `LoadedModel` to generate or infer; it takes a turn from the scheduler,
asks the supervisor for the ready engine, runs the request under the deadline and records
what the engine reports (each execution's phase, profile and time; tokens in and out;
profile switches). A hot swap holds two of these for a while: requests keep the model they
started on.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import time
from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trt_edge_runner.agent.smoke import phase_dims
from trt_edge_runner.bundle_format import BUNDLE_JSON, BundleManifest
from trt_edge_runner.memory_budget import DEFAULT_HEADROOM_MIB, MEMINFO
from trt_edge_runner.serve.api_errors import ENGINE_ERROR, ApiError
from trt_edge_runner.serve.engine_client import (
    EngineBrokeProtocol,
    EngineDied,
    EngineProcess,
    EngineRequestError,
    TokenConstraint,
)
from trt_edge_runner.serve.engine_events import Done, GenerateDone, InferDone, Step, Token
from trt_edge_runner.serve.engine_threads import single_thread, usable_cores
from trt_edge_runner.serve.metrics import ModelMetrics
from trt_edge_runner.serve.scheduler import Scheduler, deadline_error
from trt_edge_runner.serve.structured_output import GrammarTokenizer
from trt_edge_runner.serve.supervisor import Supervisor
from trt_edge_runner.serve.tensor_bytes import filled
from trt_edge_runner.text import BundleText


@dataclass(frozen=True)
class ServeOptions:
    runner: Path
    max_queue: int = 16
    timeout_s: float = 300.0
    verify: bool = True
    engine_threads: str = "auto"  # per bundle: serve.engine_threads.single_thread
    meminfo: Path = MEMINFO  # where a hot swap measures the free memory (swap_room)
    memory_headroom_mib: int = DEFAULT_HEADROOM_MIB


@dataclass
class LoadedModel:
    bundle: Path
    slot: str | None
    manifest: BundleManifest
    text: BundleText | None  # None: not a causal LM, or no tokenizer (token ids only)
    supervisor: Supervisor
    scheduler: Scheduler
    metrics: ModelMetrics
    _last_profile: int | None = field(default=None, init=False)
    _grammar_tokenizer: GrammarTokenizer | None = field(default=None, init=False)

    @property
    def name(self) -> str:
        return self.manifest.name

    @property
    def version(self) -> str:
        return self.manifest.version

    @property
    def generates(self) -> bool:
        return self.manifest.llm is not None

    def grammar_tokenizer(self) -> GrammarTokenizer:
        """The tokenizer as the grammar engine reads it (structured output), built once."""
        llm = self.manifest.llm
        assert llm is not None and self.text is not None, "structured output needs text"
        if self._grammar_tokenizer is None:
            self._grammar_tokenizer = GrammarTokenizer(
                self.text.tokenizer_json(), llm.vocab_size, llm.eos_token_ids
            )
        return self._grammar_tokenizer

    @property
    def ready(self) -> bool:
        return self.supervisor.state == "ready"

    @classmethod
    async def load(
        cls, bundle: Path, slot: str | None, options: ServeOptions, metrics: ModelMetrics
    ) -> LoadedModel:
        """Read the bundle, start its engine and smoke-run it; an error says why not."""
        manifest = BundleManifest.from_json(
            (bundle / BUNDLE_JSON).read_bytes(), str(bundle / BUNDLE_JSON)
        )
        llm = manifest.llm
        text = None
        if llm is not None and llm.tokenizer is not None:
            text = BundleText.from_bundle(bundle, llm)
        # A slots bundle's engine generates up to `slots` requests at once (bundle.json llm).
        slots = llm.slots if llm is not None else 1
        scheduler = Scheduler(
            options.max_queue, options.timeout_s, metrics.queue_depth.set, slots=slots
        )
        model: LoadedModel

        async def smoke(engine: EngineProcess) -> None:
            await model.smoke_run(engine)

        supervisor = Supervisor(
            options.runner,
            bundle,
            smoke,
            verify=options.verify,
            single_thread=single_thread(
                options.engine_threads,
                usable_cores(),
                manifest.memory.weights_bytes if manifest.memory else None,
            ),
            on_restart=metrics.restarts.inc,
        )
        model = cls(bundle, slot, manifest, text, supervisor, scheduler, metrics)
        await supervisor.start()
        return model

    async def smoke_run(self, engine: EngineProcess) -> None:
        """One token of generation, or one execution of every phase, before any request."""
        llm = self.manifest.llm
        if llm is not None:
            first = llm.bos_token_id if llm.bos_token_id is not None else 0
            await engine.call(
                "generate",
                {"prompt_ids": [first], "max_new_tokens": 1, "stream": False,
                 "reuse_prefix": False, "ignore_eos": True},
            )  # fmt: skip
            return
        for phase in self.manifest.runtime.phases or {"": 0}:
            profile, symbols = phase_dims(self.manifest, phase) if phase else (0, {})
            if not phase:
                symbols = self.manifest.profiles[0].opt_symbols()
            inputs = []
            for spec in self.manifest.inputs:
                shape = spec.dims_for(symbols)
                low = spec.values[0] if spec.values else 0
                data = filled(spec.dtype, shape, low)
                inputs.append(
                    {"name": spec.name, "dtype": spec.dtype, "shape": list(shape),
                     "b64": base64.b64encode(data).decode()}
                )  # fmt: skip
            request = {"phase": phase} if phase else {"profile": profile}
            await engine.call("infer", {"request": request, "inputs": inputs})

    def record_steps(self, steps: tuple[Step, ...]) -> None:
        for step in steps:
            self.metrics.execute.labels(phase=step.phase, profile=str(step.profile)).observe(
                step.ms / 1000.0
            )
            self._profile_used(step.profile)

    def _profile_used(self, profile: int) -> None:
        if self._last_profile is not None and profile != self._last_profile:
            self.metrics.profile_switches.inc()
        self._last_profile = profile

    async def generate(
        self,
        body: dict[str, Any],
        deadline: float,
        arrived: float,
        constraint: TokenConstraint | None = None,
    ) -> AsyncGenerator[list[Token | Done], None]:
        """The engine's events of one `generate` (tokens streamed, then `done`), in the
        batches `EngineProcess.batches` makes: the tokens that arrived together; held to
        `constraint` when given (structured output)."""
        async with self.scheduler.turn(deadline):
            engine = self.supervisor.current()
            batches = engine.batches("generate", {**body, "stream": True}, constraint)
            last = arrived
            first = True
            async with contextlib.aclosing(batches):
                while True:
                    batch = await _next(batches, deadline, self.scheduler.timeout_s)
                    if batch is None:
                        return
                    now = time.monotonic()
                    tokens = sum(1 for event in batch if isinstance(event, Token))
                    if tokens:
                        span = now - last
                        if first:
                            self.metrics.ttft.observe(span)
                            first, tokens, span = False, tokens - 1, 0.0
                        for _ in range(tokens):  # tokens that arrived together share the span
                            self.metrics.tpot.observe(span / tokens)
                        last = now
                    done = batch[-1] if isinstance(batch[-1], GenerateDone) else None
                    if done is not None:
                        self.metrics.tokens.labels(direction="in").inc(done.usage.prompt_tokens)
                        self.metrics.tokens.labels(direction="out").inc(
                            done.usage.completion_tokens
                        )
                        self.record_steps(done.steps)
                    yield batch
                    if done is not None:
                        return

    async def infer(self, body: dict[str, Any], deadline: float) -> InferDone:
        async with self.scheduler.turn(deadline):
            engine = self.supervisor.current()
            batches = engine.batches("infer", body)
            async with contextlib.aclosing(batches):
                batch = await _next(batches, deadline, self.scheduler.timeout_s)
        done = None if batch is None else batch[-1]
        if not isinstance(done, InferDone):  # engine_events decodes an infer's done as one
            raise engine_failure(EngineBrokeProtocol(f"an infer was answered with {done!r}"))
        self.metrics.execute.labels(
            phase=_phase_label(body.get("request") or {}), profile=str(done.profile)
        ).observe(done.latency_ms / 1000.0)
        self._profile_used(done.profile)
        return done

    async def close(self) -> None:
        await self.supervisor.stop()


async def _next(
    events: AsyncIterator[list[Token | Done]], deadline: float, timeout_s: float
) -> list[Token | Done] | None:
    """The next batch of engine events before `deadline`; engine failures as ApiErrors."""
    try:
        return await asyncio.wait_for(events.__anext__(), max(0.0, deadline - time.monotonic()))
    except StopAsyncIteration:
        return None
    except asyncio.TimeoutError:
        raise deadline_error(timeout_s, "running in the engine") from None
    except EngineDied as exc:
        raise ApiError(
            502,
            f"the engine died while running this request: {exc}; it is being restarted",
            outcome=ENGINE_ERROR,
            kind="engine_died",
        ) from None
    except EngineRequestError as exc:
        raise engine_refusal(exc) from None
    except EngineBrokeProtocol as exc:
        raise engine_failure(exc) from None


def engine_failure(exc: EngineBrokeProtocol) -> ApiError:
    """The engine wrote a line its schema refuses: the service's fault, not the client's."""
    return ApiError(
        502,
        f"the engine broke its protocol: {exc}; report it with the service's log",
        outcome=ENGINE_ERROR,
        kind="engine_protocol",
    )


def engine_refusal(exc: EngineRequestError) -> ApiError:
    """An engine `error` event as the HTTP error it is (400 for what the request got wrong)."""
    if exc.kind in ("usage", "request_refused", "protocol"):
        return ApiError(400, exc.message, field=exc.field)
    if exc.kind == "cancelled":
        return ApiError(499, exc.message, outcome="cancelled", kind="cancelled")
    return ApiError(
        500, f"the engine failed ({exc.kind}): {exc.message}", outcome=ENGINE_ERROR, kind=exc.kind
    )


def _phase_label(request: dict[str, Any]) -> str:
    """The `phase` label of an infer: the phase it named, else `pinned` or `auto`."""
    if "phase" in request:
        return str(request["phase"])
    return "auto" if request.get("auto") else "pinned"
