"""What every stage of a build uses and none owns: the options, the event emitter, the stage
timer, the stage cache and the environment the build runs in (docs/design.md, "The build").

The stages themselves are functions from one frozen value to the next
(`trt_edge.pipeline.chain`); what they compute lives in those values, never here. This
object only times them, reports them and keeps their cached outputs, through one helper,
`BuildContext.cached`, which every cacheable stage (export, lower, validate) goes through.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import structlog

from trt_edge.manifest.resolved import ResolvedManifest
from trt_edge.pipeline.cache import StageCache, default_cache_dir, origin_entry, read_origin
from trt_edge.pipeline.environment import BuildEnvironment, current_environment
from trt_edge.pipeline.events import (
    BuildWarning,
    Emitter,
    EngineProgress,
    EventSink,
    StageFinished,
    StageStarted,
)
from trt_edge.pipeline.peak_memory import peak_rss_bytes, release_memory, reset_peak
from trt_edge.pipeline.stages import Stage

log = structlog.get_logger("trt_edge.pipeline")

T = TypeVar("T")


@dataclass(frozen=True)
class BuildOptions:
    out_dir: Path
    backend: str | None = None  # overrides the manifest's build.backend
    cache_dir: Path | None = None  # default: $TRT_EDGE_CACHE or ~/.cache/trt-edge
    use_cache: bool = True  # False: rebuild every stage (results are still stored)
    source_date_epoch: int | None = None  # default: $SOURCE_DATE_EPOCH, else manifest mtime
    events: Sequence[EventSink] = ()  # told every `BuildEvent` (progress display, --events)
    target: str | None = None  # a catalog id; default: the manifest's first target
    manifest: ResolvedManifest | None = None  # already loaded by the caller (loaded once)
    memory_headroom_mib: int | None = None  # overrides the manifest's build.memory_headroom_mib


@dataclass
class Timer:
    """Times each stage, measures its peak RSS (after handing back what earlier stages
    freed, so each figure is the stage's own) and reports both as `StageStarted`/
    `StageFinished` events (and logs). Keyed by stage name, in the order they ran."""

    emit: Emitter
    seconds: dict[str, float] = field(default_factory=dict)
    peak_rss: dict[str, int] = field(default_factory=dict)
    cached: dict[str, bool] = field(default_factory=dict)

    @contextmanager
    def stage(self, stage: Stage) -> Iterator[dict[str, bool]]:
        """Time `stage`; the caller sets the yielded `cached` flag on a cache hit."""
        name = stage.name
        flag = {"cached": False}
        self.emit(StageStarted(name))
        log.debug("stage_started", stage=name)
        release_memory()
        reset_peak()
        started = time.perf_counter()
        yield flag
        elapsed = time.perf_counter() - started
        peak = peak_rss_bytes()
        self.seconds[name] = elapsed
        self.peak_rss[name] = peak
        self.cached[name] = flag["cached"]
        log.info(
            "stage_finished",
            stage=name,
            seconds=round(elapsed, 3),
            cached=flag["cached"],
            peak_rss_mib=peak // 2**20,
        )
        self.emit(StageFinished(name, elapsed, flag["cached"], peak))


# What a cacheable stage stores: named files, bytes or files already written to the
# scratch directory it is handed (moved in, never read back into memory).
Encoder = Callable[[T, Path], Mapping[str, bytes | Path] | None]


@dataclass
class BuildContext:
    """One build's services. `origins` records, per cacheable stage that ran, the
    environment that computed its output (read from the entry on a hit)."""

    options: BuildOptions
    emit: Emitter
    timer: Timer
    cache: StageCache
    environment: BuildEnvironment
    origins: dict[str, str | None] = field(default_factory=dict)

    @classmethod
    def start(cls, options: BuildOptions) -> BuildContext:
        emit = Emitter(options.events)
        cache = StageCache(
            (options.cache_dir or default_cache_dir()).expanduser(),
            enabled=options.use_cache,
            on_event=partial(_cache_event, emit),
        )
        return cls(options, emit, Timer(emit), cache, current_environment())

    def engine_progress(self, phase: str, step: int, steps: int) -> None:
        """The TensorRT builder's top-level phases, into the build's progress display."""
        self.emit(EngineProgress(phase, step, steps))

    def lookup(self, stage: Stage, key: str) -> dict[str, bytes] | None:
        """The stage's cache entry, noting where it was computed (read from the entry)."""
        hit = self.cache.get(stage.name, key)
        if hit is not None:
            self.origins[stage.name] = read_origin(hit)
        return hit

    def cached(
        self,
        stage: Stage,
        key: str,
        compute: Callable[[], T],
        encode: Encoder[T],
        decode: Callable[[dict[str, bytes]], T],
        hit: dict[str, bytes] | None = None,
    ) -> T:
        """The one cached stage: timed under `stage`, the entry under `key` decoded if there
        is one (`hit`: already looked up), else computed and stored (unless `encode` says
        None: an output not worth keeping, such as a failed validation)."""
        with self.timer.stage(stage) as flag:
            if hit is None:
                hit = self.lookup(stage, key)
            if hit is not None:
                flag["cached"] = True
                return decode(hit)
            value = compute()
            with self.cache.scratch_dir() as scratch:
                files = encode(value, scratch)
                if files is not None:
                    self.origins[stage.name] = self.environment.id
                    self.cache.put(stage.name, key, {**files, **origin_entry(self.environment.id)})
            return value

    def stage_provenance(self) -> dict[str, Any]:
        """`provenance.stages`: per cacheable stage that ran, whether its output came from
        the cache and which environment computed it. A stage absent here was not needed
        (a later stage's output came from the cache)."""
        return {
            name: {"cached": self.timer.cached.get(name, False), "computed_in": origin}
            for name, origin in self.origins.items()
        }


def _cache_event(emit: Emitter, name: str, fields: dict[str, Any]) -> None:
    """A hit is logged; anything else (a corrupted entry, a failed write) only costs time,
    so it is a warning in the log and in the build's progress display."""
    if name == "cache_hit":
        log.debug(name, **fields)
        return
    log.warning(name, **fields)
    detail = ", ".join(f"{k}={v}" for k, v in fields.items())
    emit(BuildWarning(name, f"stage cache: {name.replace('_', ' ')} ({detail})"))
