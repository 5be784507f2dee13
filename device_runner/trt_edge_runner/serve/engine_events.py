"""The engine's event lines as typed values, each decoded once against its schema.

`trt-edge-run serve` writes JSON lines (docs/engine-protocol.md) whose shapes are declared in
`engine-*.schema.json`. The engine client decodes every line here, at the pipe: the schema
first (so no layer above meets a KeyError, a string where a number belongs, or a stop reason
it has never heard of), then a frozen dataclass. The scheduler, the metrics and the routes
read attributes. A line that does not hold to its schema is an `EngineProtocolError` naming
the event and the field: the engine broke its contract, which is the service's fault to
report (a 502), not the client's.

Which `done` schema applies depends on the request's op (the event does not say), so the
caller names it: `decode_event(doc, op)`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from trt_edge_runner.errors import TrtEdgeError
from trt_edge_runner.schemas import validate

Stop = Literal["eos", "stop_token", "max_new_tokens", "cache_full", "cancelled"]


class EngineProtocolError(TrtEdgeError):
    """An engine line that breaks the protocol's schema (names the event and the field)."""


@dataclass(frozen=True)
class Token:
    """`token`: one generated token of a streamed `generate`."""

    index: int
    token: int


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int
    completion_tokens: int
    reused_prompt_tokens: int = 0


@dataclass(frozen=True)
class Step:
    """One execution of a generation: the phase and profile it ran under, its time."""

    phase: str
    profile: int
    start: int
    seq: int
    ms: float


@dataclass(frozen=True)
class GenerateDone:
    """`done` of a `generate`: every token, why it stopped, usage, the executions."""

    tokens: tuple[int, ...]
    stop: Stop
    usage: Usage
    steps: tuple[Step, ...]
    timings: Mapping[str, float | None]


@dataclass(frozen=True)
class OutputTensor:
    name: str
    dtype: str
    shape: tuple[int, ...]
    b64: str


@dataclass(frozen=True)
class InferDone:
    """`done` of an `infer`: the profile it ran on, the outcome, the latency, the outputs."""

    profile: int
    profile_name: str
    outcome: str
    latency_ms: float
    outputs: tuple[OutputTensor, ...]


@dataclass(frozen=True)
class ControlDone:
    """`done` of a `cancel`, `ping` or `shutdown` (`rss_bytes`: a ping's answer)."""

    rss_bytes: int | None = None


@dataclass(frozen=True)
class Failure:
    """`error`: the engine refused or failed the request; `field` names the request field."""

    kind: str
    message: str
    field: str | None = None


@dataclass(frozen=True)
class TensorSpec:
    """An input or output of the loaded program; a dim is a size or a symbol name."""

    name: str
    dtype: str
    shape: tuple[int | str, ...]


@dataclass(frozen=True)
class GenerationFacts:
    """What the engine generates with: the contract, vocabulary, cache length, eos ids, and
    how many requests it generates at once (the program's slots; 1 without)."""

    contract: str
    vocab_size: int
    max_cache_len: int
    eos_token_ids: tuple[int, ...]
    slots: int


@dataclass(frozen=True)
class EngineInfo:
    """The engine's `ready` line: what the loaded bundle is and how it generates."""

    model_name: str
    model_version: str
    mode: str
    phases: Mapping[str, int | str]
    profiles: tuple[str, ...]
    inputs: tuple[TensorSpec, ...]
    outputs: tuple[TensorSpec, ...]
    generation: GenerationFacts | None


Done = GenerateDone | InferDone | ControlDone
Event = Token | Done | Failure
DONE_SCHEMAS = {
    "generate": "engine-done-generate",
    "infer": "engine-done-infer",
    "cancel": "engine-done-control",
    "ping": "engine-done-control",
    "shutdown": "engine-done-control",
}


def _checked(schema: str, doc: Mapping[str, Any], what: str) -> dict[str, Any]:
    """`doc` held to `schema`; the message reads `the engine's token event breaks
    engine-token.schema.json: token: expected integer`."""
    return validate(
        schema,
        dict(doc),
        f"the engine's {what} breaks {schema}.schema.json",
        lambda message, field: EngineProtocolError(message),
    )


def _spec(raw: Mapping[str, Any]) -> TensorSpec:
    return TensorSpec(raw["name"], raw["dtype"], tuple(raw["shape"]))


def decode_ready(doc: Mapping[str, Any]) -> EngineInfo:
    """The `ready` line as an `EngineInfo`; EngineProtocolError naming the field if not one."""
    ready = _checked("engine-ready", doc, "ready line")
    generation = ready.get("generation")
    return EngineInfo(
        model_name=ready["model"]["name"],
        model_version=ready["model"]["version"],
        mode=ready["mode"],
        phases=dict(ready["phases"]),
        profiles=tuple(ready["profiles"]),
        inputs=tuple(_spec(t) for t in ready["inputs"]),
        outputs=tuple(_spec(t) for t in ready["outputs"]),
        generation=None
        if generation is None
        else GenerationFacts(
            generation["contract"],
            generation["vocab_size"],
            generation["max_cache_len"],
            tuple(generation["eos_token_ids"]),
            generation["slots"],
        ),
    )


def decode_event(doc: Mapping[str, Any], op: str) -> Event:
    """One event line of a request of `op`, typed; EngineProtocolError when it is none of the
    events that request can have, or breaks its schema."""
    event = doc.get("event")
    if event == "token" and op == "generate":
        token = _checked("engine-token", doc, "token event")
        return Token(token["index"], token["token"])
    if event == "error":
        error = _checked("engine-error", doc, "error event")["error"]
        return Failure(error["kind"], error["message"], error.get("field"))
    if event == "done" and op in DONE_SCHEMAS:
        done = _checked(DONE_SCHEMAS[op], doc, f"{op} done event")
        if op == "generate":
            return _generate_done(done)
        if op == "infer":
            return _infer_done(done)
        return ControlDone(done.get("rss_bytes"))
    raise EngineProtocolError(f"the engine answered a {op} request with event {event!r}")


def _generate_done(done: dict[str, Any]) -> GenerateDone:
    usage = done["usage"]
    return GenerateDone(
        tokens=tuple(done["tokens"]),
        stop=done["stop"],
        usage=Usage(
            usage["prompt_tokens"],
            usage["completion_tokens"],
            usage.get("reused_prompt_tokens", 0),
        ),
        steps=tuple(
            Step(s["phase"], s["profile"], s["start"], s["seq"], float(s["ms"]))
            for s in done["steps"]
        ),
        timings=dict(done["timings"]),
    )


def _infer_done(done: dict[str, Any]) -> InferDone:
    return InferDone(
        profile=done["profile"],
        profile_name=done["profile_name"],
        outcome=done["outcome"],
        latency_ms=float(done["latency_ms"]),
        outputs=tuple(
            OutputTensor(o["name"], o["dtype"], tuple(o["shape"]), o["b64"])
            for o in done["outputs"]
        ),
    )
