"""The build's typed event stream: what a build tells whoever watches it, as data.

A build emits `BuildEvent`s — a stage started or finished, the backend chosen, a
warning, the bundle written, the build failed — to the sinks in
`BuildOptions.events`. The CLI's progress display draws from them, `trt-edge build
--events FILE` writes them as JSON lines, and the container build's host
(`trt_edge.containers.build_runner`) rebuilds its `BuildResult` from the stream the
build inside writes: the protocol between the two is this module, not the log
format, so renaming a log line changes nothing a program reads.

Every line is one JSON object: `{"schema": "trt-edge.build-events", "version": 1,
"type": "<event type>", ...fields}` (docs/build-events.md). A reader ignores event
types and fields it does not know (a newer writer may add them) and refuses a
different `version` (a change that is not additive bumps it). Plain data and the
standard library only: the host reads the stream without torch.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, ClassVar, dataclass_transform, get_args

from trt_edge.pipeline.errors import BuildError

SCHEMA = "trt-edge.build-events"
VERSION = 1


@dataclass_transform(frozen_default=True)
class _Event:
    """What every event type is: a frozen dataclass of its fields, named on the wire by the
    `type` given in its class line (`TYPE`), so declaring an event is its fields alone."""

    TYPE: ClassVar[str]

    def __init_subclass__(cls, *, type: str, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.TYPE = type
        dataclass(frozen=True)(cls)


class StageStarted(_Event, type="stage_started"):
    """A stage of `trt_edge.pipeline.stages.STAGES` began."""

    stage: str


class StageFinished(_Event, type="stage_finished"):
    """A stage ended; `cached`: its output came from the stage cache; `peak_rss_bytes`:
    the build process's peak resident memory during the stage (0: not measured)."""

    stage: str
    seconds: float
    cached: bool
    peak_rss_bytes: int = 0


class BackendChosen(_Event, type="backend_chosen"):
    """The backend that lowers the program, why, the recipe and the target fingerprinted."""

    backend: str
    reason: str
    recipe: str
    target: str


class BuildWarning(_Event, type="warning"):
    """Something the user should know that does not stop the build; `code` is stable."""

    code: str
    message: str


class BundleWritten(_Event, type="bundle_written"):
    """The validated bundle is in place at `path`."""

    path: str
    model: str


class EngineProgress(_Event, type="engine_progress"):
    """The TensorRT builder began (`step` 0) or finished (`step` == `steps`) one of its
    top-level phases (its `IProgressMonitor`); a build with a TensorRT engine only."""

    phase: str
    step: int
    steps: int


class BuildFailed(_Event, type="build_failed"):
    """The build stopped: the message the CLI renders, its hint and the exit code."""

    message: str
    hint: str
    exit_code: int


BuildEvent = (
    StageStarted
    | StageFinished
    | BackendChosen
    | BuildWarning
    | EngineProgress
    | BundleWritten
    | BuildFailed
)
EVENT_TYPES: dict[str, type[Any]] = {cls.TYPE: cls for cls in get_args(BuildEvent)}
EventSink = Callable[[BuildEvent], None]


# The field types events use (annotations are strings under `from __future__ import annotations`).
_FIELD_TYPES: dict[str, type | tuple[type, ...]] = {
    "str": str,
    "float": (int, float),
    "bool": bool,
    "int": int,
}


class EventStreamError(BuildError, ValueError):
    """A line of the stream is not a build event of this version."""


def to_json(event: BuildEvent) -> str:
    """One line of the stream (no newline)."""
    body = {"schema": SCHEMA, "version": VERSION, "type": event.TYPE}
    body.update(dataclasses.asdict(event))
    return json.dumps(body, sort_keys=True, separators=(",", ":"))


def from_json(line: str) -> BuildEvent | None:
    """The event on `line`; None for a line that is not a build event at all (other output)
    or an event type this reader does not know. Raises `EventStreamError` for a build
    event of another version or with missing or mistyped fields."""
    try:
        body = json.loads(line)
    except json.JSONDecodeError:
        return None
    if not isinstance(body, dict) or body.get("schema") != SCHEMA:
        return None
    if body.get("version") != VERSION:
        raise EventStreamError(
            f"build event stream version {body.get('version')!r}; this reader reads {VERSION}"
        )
    cls = EVENT_TYPES.get(str(body.get("type")))
    if cls is None:
        return None
    values: dict[str, Any] = {}
    for item in dataclasses.fields(cls):
        if item.name not in body and item.default is not dataclasses.MISSING:
            continue  # a field added later, with its default, is absent from older streams
        if item.name not in body:
            raise EventStreamError(f"{cls.TYPE} event without {item.name!r}: {line.strip()}")
        value: Any = body[item.name]
        wanted = _FIELD_TYPES[str(item.type)]
        if not isinstance(value, wanted) or (item.type != "bool" and isinstance(value, bool)):
            raise EventStreamError(f"{cls.TYPE} event: {item.name}={value!r} is not {item.type}")
        values[item.name] = float(body[item.name]) if item.type == "float" else value
    event: BuildEvent = cls(**values)
    return event


def read_events(lines: Iterable[str]) -> Iterator[BuildEvent]:
    """The build events among `lines` (other lines skipped)."""
    for line in lines:
        event = from_json(line)
        if event is not None:
            yield event


class JsonLinesSink:
    """Writes each event as one flushed line to a text stream (a file, stdout, a pipe)."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream

    def __call__(self, event: BuildEvent) -> None:
        self.stream.write(to_json(event) + "\n")
        self.stream.flush()

    @classmethod
    def open(cls, path: Path) -> JsonLinesSink:
        return cls(path.open("w", encoding="utf-8"))

    def close(self) -> None:
        self.stream.close()


class Emitter:
    """Fans one event out to every sink of a build."""

    def __init__(self, sinks: Iterable[EventSink]) -> None:
        self.sinks = tuple(sinks)

    def __call__(self, event: BuildEvent) -> None:
        for sink in self.sinks:
            sink(event)
