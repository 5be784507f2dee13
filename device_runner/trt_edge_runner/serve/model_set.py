"""Several models in one service: which are configured, which are loaded, which to unload.

`trt-edge-device serve --bundle A --bundle B` serves every bundle given, each by its
`bundle.json` name. Only the first is loaded at start (its smoke run proves the runner and
the board work before the service says it is ready); the others load when a request first
names them. Concurrent requests for a model being loaded wait for that one load.

Memory is judged from each bundle's record (`bundle.json` `memory.total_bytes`, the figure
install and hot swap judge by) against a budget fixed at start (`--memory-budget-mib`, else
what the board has available then, less the headroom). Before a load, when the resident
models and the new one would exceed it, the least recently used idle models are unloaded
(their engines stopped) until it fits. A model with requests in flight is never unloaded:
when only busy models could make room, the request gets 503 with `Retry-After` naming them
(it does not wait: a client retrying beats a queue of requests all holding their sockets
while a long generation runs).

A request holds its model from the moment it is looked up until its response is sent
(`ModelLeases`, the innermost ASGI middleware, releases it), so a model is never stopped
between a request choosing it and the request taking its turn in the engine.
"""

from __future__ import annotations

import asyncio
import collections
import contextvars
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from starlette.types import ASGIApp, Receive, Scope, Send

from trt_edge_runner.bundle_format import BUNDLE_JSON, BundleManifest
from trt_edge_runner.bundle_integrity import read_manifest
from trt_edge_runner.errors import TrtEdgeError, UsageError, Where
from trt_edge_runner.memory_budget import MIB, MemInfoError, device_memory, mib
from trt_edge_runner.serve.api_errors import ENGINE_ERROR, ApiError
from trt_edge_runner.serve.engine_client import EngineError
from trt_edge_runner.serve.loaded_model import LoadedModel, ServeOptions
from trt_edge_runner.serve.metrics import Metrics
from trt_edge_runner.serve.scheduler import deadline_error

LOG = logging.getLogger("trt_edge_runner.serve.model_set")
ReleaseFn = Callable[[Sequence[str]], None]


def bundle_manifest(bundle: Path) -> BundleManifest:
    """The bundle's `bundle.json`, read by the one reader (`bundle_integrity.read_manifest`:
    no link, bounded size; a TrtEdgeError naming the file when it is not a bundle's)."""
    return read_manifest(bundle)[1]


@dataclass(frozen=True)
class Configured:
    """One model the service serves, loaded or not."""

    bundle: Path
    manifest: BundleManifest

    @property
    def name(self) -> str:
        return self.manifest.name

    @property
    def needs_bytes(self) -> int:
        """What its bundle records it needs in memory (0 when it records nothing)."""
        memory = self.manifest.memory
        return memory.total_bytes if memory is not None else 0


def configured_models(bundles: Sequence[Path]) -> list[Configured]:
    """The bundles' manifests, in the order given; a UsageError when one does not read or
    two carry the same model name (requests could not tell them apart)."""
    models: list[Configured] = []
    for bundle in bundles:
        try:
            manifest = bundle_manifest(bundle)
        except OSError as exc:
            raise UsageError(
                f"cannot read {BUNDLE_JSON}: {exc.strerror}",
                where=Where(bundle / BUNDLE_JSON, option="--bundle"),
            ) from None
        twin = next((m for m in models if m.name == manifest.name), None)
        if twin is not None:
            raise UsageError(
                f"{twin.bundle} and {bundle} both carry the model {manifest.name!r}; "
                "requests choose a model by name, so each --bundle needs its own",
                where=Where(option="--bundle", value=str(bundle)),
                hint="serve one of them, or build one under another name",
            )
        models.append(Configured(bundle, manifest))
    return models


@dataclass(frozen=True)
class MemoryBudget:
    """How much the resident models may need together, and where that figure came from."""

    total_bytes: int
    source: str


def memory_budget(budget_mib: int | None, meminfo: Path, headroom_mib: int) -> MemoryBudget:
    """`--memory-budget-mib` when given; else what the board has available now (before any
    model is loaded) less the headroom, on install's and hot swap's rule."""
    if budget_mib is not None:
        return MemoryBudget(budget_mib * MIB, "--memory-budget-mib")
    try:
        device = device_memory(meminfo)
    except MemInfoError as exc:
        raise UsageError(
            f"cannot tell the memory budget for several models: {exc}",
            where=Where(option="--memory-budget-mib"),
            hint="pass --memory-budget-mib N",
        ) from None
    headroom = headroom_mib * MIB
    free = device.free_bytes(headroom)
    if free is not None:
        return MemoryBudget(free, f"MemAvailable in {device.source} less {mib(headroom)}")
    return MemoryBudget(
        device.usable_bytes(headroom), f"MemTotal in {device.source} less {mib(headroom)}"
    )


def check_fits(models: Sequence[Configured], budget: MemoryBudget) -> None:
    """A UsageError for a model that could never load: larger than the whole budget."""
    for model in models:
        if model.needs_bytes > budget.total_bytes:
            raise UsageError(
                f"{model.name} ({model.bundle}) needs {mib(model.needs_bytes)}, more than the "
                f"whole memory budget of {mib(budget.total_bytes)} ({budget.source})",
                where=Where(option="--memory-budget-mib"),
                hint="raise --memory-budget-mib, or serve a smaller build of that model",
            )


@dataclass(frozen=True)
class Loaded:
    """A loaded model as the unloading policy sees it."""

    name: str
    needs_bytes: int
    busy: bool  # requests in flight: never unloaded


@dataclass(frozen=True)
class Room:
    """What to unload (least recently used first) so a model fits, or that it cannot."""

    unload: tuple[str, ...]
    fits: bool
    free_bytes: int  # in the budget once `unload` is done


def room_for(needs_bytes: int, loaded: Sequence[Loaded], budget_bytes: int) -> Room:
    """The least recently used idle models (`loaded` is least recently used first) whose
    unloading makes `needs_bytes` fit in `budget_bytes`; `fits` False when unloading every
    idle one would not be enough (then nothing is unloaded)."""
    free = budget_bytes - sum(model.needs_bytes for model in loaded)
    unload: list[str] = []
    for model in loaded:
        if free >= needs_bytes:
            break
        if not model.busy:
            unload.append(model.name)
            free += model.needs_bytes
    if free < needs_bytes:
        return Room((), False, free)
    return Room(tuple(unload), True, free)


# The models the current HTTP request looked up (set by `ModelLeases` for each request).
_HELD: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar("held", default=None)


def request_model() -> str:
    """The model the current request looked up ("" when it chose none): its metrics label."""
    held = _HELD.get()
    return held[-1] if held else ""


def note_model(name: str) -> None:
    """Record that the current request uses `name` (for its metrics label)."""
    held = _HELD.get()
    if held is not None:
        held.append(name)


@dataclass
class ModelSet:
    """The configured models, the resident ones (least recently used first) and the loads."""

    models: list[Configured]
    budget: MemoryBudget
    options: ServeOptions
    metrics: Metrics
    resident: dict[str, LoadedModel] = field(default_factory=dict)
    in_use: collections.Counter[str] = field(default_factory=collections.Counter)
    started: bool = False
    _loading: dict[str, asyncio.Task[LoadedModel]] = field(default_factory=dict)
    _room: asyncio.Lock = field(default_factory=asyncio.Lock)

    def __post_init__(self) -> None:
        for model in self.models:
            self.metrics.resident.labels(model=model.name).set(0)

    @property
    def names(self) -> list[str]:
        return [model.name for model in self.models]

    @property
    def ready(self) -> bool:
        """The first model passed its smoke run and no resident engine is restarting."""
        return self.started and all(model.ready for model in self.resident.values())

    def configured(self, name: str | None) -> Configured:
        """The model `name` selects: 404 for a name not served, 400 when several are served
        and none is named (with one, an omitted name means it)."""
        if name is None:
            if len(self.models) == 1:
                return self.models[0]
            raise ApiError(
                400,
                f"this service serves several models: name one of {self.names}",
                field="model",
            )
        found = next((model for model in self.models if model.name == name), None)
        if found is None:
            raise ApiError(
                404,
                f"{name!r} is not served here; this service serves {self.names}",
                field="model",
                kind="model_not_found",
            )
        return found

    async def start(self) -> None:
        """Load the first model (the caller ends the service when it does not load)."""
        first = self.models[0]
        task = asyncio.ensure_future(self._load(first))
        self._loading[first.name] = task
        try:
            await task
        finally:
            self._loading.pop(first.name, None)
        self.started = True

    async def get(self, name: str | None) -> LoadedModel:
        """The loaded model `name` names, loading it first when it is not (the request
        waits, within its deadline); held by the current request until its response ends."""
        wanted = self.configured(name)
        model = self.resident.get(wanted.name)
        while model is None:  # again when another load unloaded it before this request woke
            await self._wait_for_load(wanted)
            model = self.resident.get(wanted.name)
        self.resident[wanted.name] = self.resident.pop(wanted.name)  # most recently used
        held = _HELD.get()
        if held is not None:
            held.append(wanted.name)
            self.in_use[wanted.name] += 1
        return model

    def release(self, names: Sequence[str]) -> None:
        """The request that held `names` ended (its response was sent or it failed)."""
        for name in names:
            if name in self.in_use:
                self.in_use[name] -= 1
                if self.in_use[name] <= 0:
                    del self.in_use[name]

    async def _wait_for_load(self, wanted: Configured) -> LoadedModel:
        task = self._loading.get(wanted.name)
        if task is None:
            task = asyncio.ensure_future(self._load(wanted))
            self._loading[wanted.name] = task
            task.add_done_callback(lambda done: self._load_ended(wanted.name, done))
        timeout_s = self.options.timeout_s
        try:
            # shield: a client that goes away does not cancel the load others wait for.
            return await asyncio.wait_for(asyncio.shield(task), timeout_s)
        except asyncio.TimeoutError:
            raise deadline_error(timeout_s, f"waiting for {wanted.name} to load") from None
        except ApiError:  # no room: already the answer
            raise
        except (EngineError, TrtEdgeError, OSError) as exc:
            raise ApiError(
                503,
                f"model {wanted.name!r} did not load: {exc}",
                field="model",
                outcome=ENGINE_ERROR,
                kind="model_unavailable",
                headers={"Retry-After": "1"},
            ) from None

    def _load_ended(self, name: str, task: asyncio.Task[LoadedModel]) -> None:
        """Forget a finished load; its failure was each waiter's 503 (read here too, so a
        load whose waiters all went away logs no 'exception never retrieved')."""
        self._loading.pop(name, None)
        if not task.cancelled():
            task.exception()

    async def _load(self, wanted: Configured) -> LoadedModel:
        """Make room, then load `wanted`: one load at a time, so the room judged is real."""
        async with self._room:
            if wanted.name in self.resident:  # loaded while this load waited for the lock
                return self.resident[wanted.name]
            await self._make_room(wanted)
            LOG.info("loading %s from %s", wanted.name, wanted.bundle)
            model = await LoadedModel.load(
                wanted.bundle, None, self.options, self.metrics.model(wanted.name)
            )
            self.resident[wanted.name] = model
            self.metrics.loaded(model.name, model.version, "")
            return model

    async def _make_room(self, wanted: Configured) -> None:
        """Unload what `room_for` picks so `wanted` fits the budget; 503 naming the busy
        models when it cannot."""
        if not self.resident:  # alone it loads: a model over the whole budget was refused at start
            return
        needs = {model.name: model.needs_bytes for model in self.models}
        loaded = [Loaded(name, needs[name], self._busy(name)) for name in self.resident]
        room = room_for(wanted.needs_bytes, loaded, self.budget.total_bytes)
        if not room.fits:
            raise ApiError(
                503,
                f"model {wanted.name!r} needs {mib(wanted.needs_bytes)}; the budget of "
                f"{mib(self.budget.total_bytes)} has {mib(room.free_bytes)} free once every "
                f"idle model is unloaded, and the models holding the rest have requests in "
                f"flight ({', '.join(m.name for m in loaded if m.busy)}); retry shortly",
                field="model",
                outcome="rejected",
                kind="server_busy",
                headers={"Retry-After": "1"},
            )
        # Out of `resident` before any await: no request can take them from here on.
        victims = [self.resident.pop(name) for name in room.unload]
        for model in victims:
            LOG.info(
                "unloading %s (%s) to make room for %s (%s) in the budget of %s",
                model.name, mib(needs[model.name]), wanted.name, mib(wanted.needs_bytes),
                mib(self.budget.total_bytes),
            )  # fmt: skip
            self.metrics.unloads.labels(model=model.name).inc()
            self.metrics.gone(model.name, model.version, "")
            await model.close()

    def _busy(self, name: str) -> bool:
        model = self.resident[name]
        return self.in_use.get(name, 0) > 0 or model.scheduler.active > 0

    async def close(self) -> None:
        for task in list(self._loading.values()):
            task.cancel()
        for model in list(self.resident.values()):
            await model.close()
        self.resident.clear()


class ModelLeases:
    """ASGI middleware: what a request looked up is held until its response is sent, then
    released in the service's model set."""

    def __init__(self, app: ASGIApp, release: ReleaseFn) -> None:
        self.app = app
        self._release = release

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        held: list[str] = []
        token = _HELD.set(held)
        try:
            await self.app(scope, receive, send)
        finally:
            _HELD.reset(token)
            self._release(held)
