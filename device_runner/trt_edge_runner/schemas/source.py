"""The one source of the JSON Schemas of every document that crosses a process or machine
boundary: `bundle.json` (host → device), `trt-edge-run`'s documents (C++ runner → agent), and
the device side's own: `runner.json` (runner tarball → flash), the agent's `state.json`,
`device.json` and `facts.json`, `trt-edge-device status/health --json` (device → fleet) and the
fleet's per-device reports (Ansible on a device → the rollout).

Each schema is built here from a few small helpers, and `python -m trt_edge_runner.schemas
--write` turns them into the checked-in `*.schema.json` files beside this module (JSON Schema
draft-07: the newest draft the validator we use, fastjsonschema, implements in full). A test
fails when the files drift from this source.

To add a section or a field, declare it here (optional unless every reader needs it), run
`python -m trt_edge_runner.schemas --write`, and commit the regenerated file: see
`docs/contracts.md` for when a version must change.
"""

from __future__ import annotations

from typing import Any

Schema = dict[str, Any]

DRAFT = "http://json-schema.org/draft-07/schema#"
ID_BASE = "https://trt-edge.dev/schemas/"


# ---- helpers: small on purpose, each one keyword of JSON Schema ---------------------------
def string(**extra: Any) -> Schema:
    return {"type": "string", **extra}


def integer(**extra: Any) -> Schema:
    return {"type": "integer", **extra}


def number(**extra: Any) -> Schema:
    return {"type": "number", **extra}


BOOLEAN: Schema = {"type": "boolean"}
OPEN_OBJECT: Schema = {"type": "object"}


def nullable(schema: Schema) -> Schema:
    """`schema` or null (draft-07 has no `nullable`: a type list, or anyOf for an enum)."""
    if set(schema) == {"type"}:
        return {"type": [schema["type"], "null"]}
    return {"anyOf": [schema, {"type": "null"}]}


def array(items: Schema, **extra: Any) -> Schema:
    return {"type": "array", "items": items, **extra}


def enum(*values: Any) -> Schema:
    return {"enum": list(values)}


def const(value: Any) -> Schema:
    return {"const": value}


def mapping(values: Schema) -> Schema:
    """An object used as a map: any key, each value a `values`."""
    return {"type": "object", "additionalProperties": values}


def obj(
    required: dict[str, Schema],
    optional: dict[str, Schema] | None = None,
    *,
    closed: bool = False,
    description: str | None = None,
) -> Schema:
    """An object with `required` and `optional` properties. Open by default: a newer writer
    may add an optional field an older reader ignores (docs/contracts.md); `closed` for
    documents a reader must refuse unknown keys in (requests)."""
    schema: Schema = {"type": "object"}
    if description:
        schema["description"] = description
    schema["properties"] = {**required, **(optional or {})}
    schema["required"] = sorted(required)
    if closed:
        schema["additionalProperties"] = False
    return schema


def document(name: str, title: str, body: Schema) -> Schema:
    """A top-level schema: its `$id`, title and draft."""
    return {"$schema": DRAFT, "$id": f"{ID_BASE}{name}.schema.json", "title": title, **body}


# ---- bundle.json ----------------------------------------------------------------------------
BUNDLE_SCHEMA_VERSION = 1
LLM_SECTION_VERSION = 1
GENERATION_SECTION_VERSION = 1

NON_NEGATIVE = integer(minimum=0)
DIM = {"anyOf": [integer(minimum=0), string(minLength=1)]}
TENSOR = obj(
    {"name": string(minLength=1), "dtype": string(minLength=1), "shape": array(DIM)},
    {"values": nullable(array(integer(), minItems=2, maxItems=2))},
)
PHASE_TARGET = {"anyOf": [integer(minimum=0), const("auto")]}

# A delegate's TensorRT engine as the build recorded it (`EngineRecord`, docs/tensorrt.md).
ENGINE_IO = obj({"name": string(), "dtype": string(), "shape": array(integer())})
SHAPES = obj({"min": array(integer()), "opt": array(integer()), "max": array(integer())})
ENGINE_RECORD = obj(
    {
        "flavour": enum("tensorrt", "tensorrt_rtx"),
        "version": string(),
        "compute_capabilities": array(string(pattern="^[0-9]+\\.[0-9]+$")),
        "precision": string(),
        "onnx_opset": integer(),
        "inputs": array(ENGINE_IO),
        "outputs": array(ENGINE_IO),
        "profiles": array(
            obj({"index": NON_NEGATIVE, "name": string(), "shapes": mapping(SHAPES)})
        ),
        "weights_bytes": nullable(NON_NEGATIVE),
        "activation_bytes": array(NON_NEGATIVE),
        "engine_bytes": NON_NEGATIVE,
        "engine_sha256": string(pattern="^[0-9a-f]{64}$"),
    },
    {"source": enum("builder", "engine")},
)

LLM_SECTION = obj(
    {
        "version": integer(),
        "method": string(),
        "max_cache_len": integer(minimum=1),
        "vocab_size": integer(minimum=1),
        # `window` (llm version 2, `attention: filled`): the input whose length is the window;
        # `slot` (version 3, `runtime.slots`): the input naming each row's KV cache.
        "inputs": obj(
            {"tokens": string(), "positions": string()}, {"window": string(), "slot": string()}
        ),
        "logits": string(),
        "eos_token_ids": array(integer()),
        "adds_bos": BOOLEAN,
        "prepend_bos": BOOLEAN,
        "requires_zeroed_planned_memory": BOOLEAN,
        "cache_buffers": array(string()),
        "architecture": string(),
    },
    {
        "bos_token_id": nullable(integer()),
        "pad_token_id": nullable(integer()),
        "tokenizer": nullable(string()),
        # Added by the serving work: the model's chat template and named special tokens.
        "chat_template": nullable(string()),
        "special_tokens": mapping(string()),
        # llm version 2: window lengths are multiples of this (docs/filled-cache.md).
        "window_bucket": integer(minimum=1),
        # llm version 3: the KV caches the program holds (conversations served at once).
        "slots": integer(minimum=2),
    },
    description="A causal LM built by the Hugging Face recipe: KV cache inside the program.",
)

GENERATION_SECTION = obj(
    {
        "version": integer(),
        "contract": enum("tiny_llm"),
        "tokens": string(minLength=1),
        "start_position": string(minLength=1),
        "logits": string(minLength=1),
    },
    description="A generation contract whose caches are passed in and out (every input "
    "other than `tokens` and `start_position` is a cache, fed back from the output of the "
    "same position).",
)

MEMORY_SECTION = obj(
    {
        k: NON_NEGATIVE
        for k in ("weights_bytes", "planned_bytes", "kv_cache_bytes", "runner_bytes", "total_bytes")
    },
    description="What the bundle needs in memory, by part (bytes).",
)

BUNDLE = document(
    "bundle",
    "trt-edge bundle.json",
    obj(
        {
            "schema_version": integer(),
            "model": obj({"name": string(minLength=1), "version": string(minLength=1)}),
            "backend": string(),
            "target": OPEN_OBJECT,
            "io": obj({"method": string(), "inputs": array(TENSOR), "outputs": array(TENSOR)}),
            "profiles": array(
                obj(
                    {
                        "name": string(),
                        "dims": mapping(
                            obj({"min": NON_NEGATIVE, "opt": NON_NEGATIVE, "max": NON_NEGATIVE})
                        ),
                    },
                    {
                        "index": NON_NEGATIVE,
                        "bounds": array(
                            obj(
                                {
                                    "input": string(),
                                    "min": array(integer()),
                                    "max": array(integer()),
                                }
                            )
                        ),
                    },
                )
            ),
            "runtime": obj({"policy": enum("pinned", "auto"), "phases": mapping(PHASE_TARGET)}),
            "files": mapping(
                obj({"sha256": string(pattern="^[0-9a-f]{64}$"), "size": NON_NEGATIVE})
            ),
        },
        {
            "delegates": array(
                obj(
                    {
                        "backend_id": string(),
                        "method": string(),
                        "index": NON_NEGATIVE,
                        "blob_size": NON_NEGATIVE,
                    },
                    {"profile_signature": nullable(OPEN_OBJECT), "engine": ENGINE_RECORD},
                )
            ),
            "provenance": OPEN_OBJECT,
            # null is read as absent, by the Python and the C++ readers alike.
            "llm": nullable(LLM_SECTION),
            "generation": nullable(GENERATION_SECTION),
            "memory": nullable(MEMORY_SECTION),
            "quantization": OPEN_OBJECT,
        },
    ),
)


# ---- trt-edge-run --json (interface 1) ---------------------------------------------------------
RUNNER_INTERFACE = 1

RUNNER_FACTS = obj(
    {
        "name": string(),
        "version": string(),
        "arch": string(),
        "executorch": string(),
        "native_profile_guard": BOOLEAN,
        "verifies_digests": BOOLEAN,
        "backends": array(string()),
    }
)
HEAD_OK = {"interface": const(RUNNER_INTERFACE), "ok": const(True), "runner": RUNNER_FACTS}
BUNDLE_FACTS = {
    "bundle": string(),
    "model": obj({"name": string(), "version": string()}),
    "target": obj({"id": nullable(string()), "arch": nullable(string())}),
    "mode": enum("emulated", "native"),
    "profile0_only": BOOLEAN,
    "digests_verified": BOOLEAN,
}
RAN_TENSOR = obj({"name": string(), "dtype": string(), "shape": array(NON_NEGATIVE)})
# Why a generation stopped: one C++ generation module serves --generate and --serve.
STOPS = ("eos", "stop_token", "max_new_tokens", "cache_full", "cancelled")
# The selection outcomes a run that executed can have (profile_selection.h `to_string`).
OUTCOME = enum("ok", "pin_ignored_single_profile")
# The engine protocol's spelling (docs/engine-protocol.md).
ENGINE_OUTCOME = OUTCOME  # the engine reports the outcomes --run/--phases report
TIMINGS = obj(
    {
        k: nullable(number())
        for k in (
            "prefill_ms",
            "time_to_first_token_ms",
            "decode_ms_per_token",
            "decode_tokens_per_s",
            "tokens_per_s",
            "total_ms",
        )
    }
)
STEP = obj(
    {
        "phase": string(),
        "profile": integer(),
        "start": NON_NEGATIVE,
        "seq": integer(minimum=1),
        "ms": number(),
    }
)
ERROR_KINDS = (
    "internal",
    "usage",
    "bundle_format",
    "bundle_integrity",
    "target_mismatch",
    "program_load",
    "request_refused",
    "execution_failed",
    "output_write",
)

RUNNER_VERSION = document("runner-version", "trt-edge-run --version --json", obj(HEAD_OK))
RUNNER_LOAD = document(
    "runner-load",
    "trt-edge-run --load --json",
    obj(
        {
            **HEAD_OK,
            **BUNDLE_FACTS,
            "phases": mapping(PHASE_TARGET),
            "profiles": array(string()),
        }
    ),
)
RUNNER_RUN = document(
    "runner-run",
    "trt-edge-run --phase/--profile/--auto --json",
    obj(
        {
            **HEAD_OK,
            **BUNDLE_FACTS,
            "request": string(),
            "profile": integer(),
            "profile_name": string(),
            "outcome": OUTCOME,
            "latency_ms": number(),
            "inputs": array(RAN_TENSOR),
            "outputs": array(RAN_TENSOR),
        },
        {"bench": mapping(number())},
    ),
)
RUNNER_PHASES = document(
    "runner-phases",
    "trt-edge-run --phases --json",
    obj(
        {
            **HEAD_OK,
            **BUNDLE_FACTS,
            "seed": integer(),
            "warmup": NON_NEGATIVE,
            "runs": integer(minimum=1),
            "phases": array(
                obj(
                    {
                        "phase": string(),
                        "request": string(),
                        "profile": integer(),
                        "profile_name": string(),
                        "outcome": OUTCOME,
                        "inputs": array(RAN_TENSOR),
                        "outputs": array(RAN_TENSOR),
                        "first_ms": number(),
                        "median_ms": number(),
                        "min_ms": number(),
                        "max_ms": number(),
                    },
                    {"runs_ms": array(number())},
                )
            ),
        }
    ),
)
RUNNER_GENERATE = document(
    "runner-generate",
    "trt-edge-run --generate --json",
    obj(
        {
            **HEAD_OK,
            **BUNDLE_FACTS,
            "request": const("generate"),
            "contract": enum("causal_lm", "tiny_llm"),
            "prompt_ids": array(integer(), minItems=1),
            "max_new_tokens": NON_NEGATIVE,
            "tokens": array(integer()),
            "stop": enum(*STOPS),
            "steps": array(STEP),
            "timings": TIMINGS,
        }
    ),
)
RUNNER_ERROR = document(
    "runner-error",
    "trt-edge-run --json on a failure",
    obj(
        {
            "interface": const(RUNNER_INTERFACE),
            "ok": const(False),
            "runner": RUNNER_FACTS,
            "error": obj(
                {"kind": enum(*ERROR_KINDS), "exit_code": integer(minimum=1), "message": string()},
                {
                    "file": string(),
                    "input": string(),
                    "phase": string(),
                    "problems": array(
                        obj({"kind": string(), "path": string(), "detail": string()})
                    ),
                },
            ),
        }
    ),
)


# ---- trt-edge-run --serve (docs/engine-protocol.md, interface 2) ------------------------------
ENGINE_INTERFACE = 2
REQUEST_ID = string(minLength=1)
B64_TENSOR = obj(
    {"name": string(), "dtype": string(), "shape": array(NON_NEGATIVE), "b64": string()}
)
USAGE = obj(
    {"prompt_tokens": NON_NEGATIVE, "completion_tokens": NON_NEGATIVE},
    {"reused_prompt_tokens": NON_NEGATIVE},
)
ENGINE_ERROR_KINDS = ("usage", "request_refused", "execution_failed", "cancelled", "protocol")

ENGINE_REQUEST = document(
    "engine-request",
    "a request line to trt-edge-run --serve",
    {
        "oneOf": [
            obj(
                {
                    "id": REQUEST_ID,
                    "op": const("generate"),
                    "prompt_ids": array(integer(), minItems=1),
                },
                {
                    "max_new_tokens": NON_NEGATIVE,
                    "sampling": obj(
                        {},
                        {
                            "temperature": number(minimum=0),
                            "top_k": NON_NEGATIVE,
                            "top_p": number(exclusiveMinimum=0, maximum=1),
                            "repetition_penalty": number(exclusiveMinimum=0),
                            "seed": integer(),
                        },
                        closed=True,
                    ),
                    "stop_token_ids": array(integer()),
                    "ignore_eos": BOOLEAN,
                    "stream": BOOLEAN,
                    "reuse_prefix": BOOLEAN,
                    "constrained": BOOLEAN,
                },
                closed=True,
            ),
            obj(
                {"id": REQUEST_ID, "op": const("infer"), "inputs": array(B64_TENSOR)},
                {
                    "request": {
                        "oneOf": [
                            obj({"phase": string()}, closed=True),
                            obj({"profile": NON_NEGATIVE}, closed=True),
                            obj({"auto": const(True)}, closed=True),
                        ]
                    },
                    "outputs": array(string()),
                },
                closed=True,
            ),
            obj({"id": REQUEST_ID, "op": const("cancel"), "target": REQUEST_ID}, closed=True),
            obj(
                {
                    "id": REQUEST_ID,
                    "op": const("mask"),
                    "target": REQUEST_ID,
                    "index": NON_NEGATIVE,
                    "allowed": string(),
                },
                closed=True,
            ),
            obj({"id": REQUEST_ID, "op": enum("ping", "shutdown")}, closed=True),
        ]
    },
)
ENGINE_READY = document(
    "engine-ready",
    "the first line of trt-edge-run --serve",
    obj(
        {
            "event": const("ready"),
            "interface": const(ENGINE_INTERFACE),
            "runner": RUNNER_FACTS,
            "model": obj({"name": string(), "version": string()}),
            "mode": enum("emulated", "native"),
            "profile0_only": BOOLEAN,
            "digests_verified": BOOLEAN,
            "phases": mapping(PHASE_TARGET),
            "profiles": array(string()),
            "inputs": array(obj({"name": string(), "dtype": string(), "shape": array(DIM)})),
            "outputs": array(obj({"name": string(), "dtype": string(), "shape": array(DIM)})),
            "generation": nullable(
                obj(
                    {
                        "contract": enum("causal_lm", "tiny_llm"),
                        "vocab_size": integer(minimum=1),
                        "max_cache_len": integer(minimum=1),
                        "eos_token_ids": array(integer()),
                        # How many requests generate at once (runtime.slots; 1 without).
                        "slots": integer(minimum=1),
                    }
                )
            ),
        }
    ),
)
ENGINE_TOKEN = document(
    "engine-token",
    "a streamed token of trt-edge-run --serve",
    obj(
        {
            "id": REQUEST_ID,
            "event": const("token"),
            "index": NON_NEGATIVE,
            "token": integer(),
        }
    ),
)
ENGINE_DONE_GENERATE = document(
    "engine-done-generate",
    "the terminal event of a generate request",
    obj(
        {
            "id": REQUEST_ID,
            "event": const("done"),
            "tokens": array(integer()),
            "stop": enum(*STOPS),
            "usage": USAGE,
            "steps": array(STEP),
            "timings": TIMINGS,
        }
    ),
)
ENGINE_DONE_INFER = document(
    "engine-done-infer",
    "the terminal event of an infer request",
    obj(
        {
            "id": REQUEST_ID,
            "event": const("done"),
            "profile": integer(),
            "profile_name": string(),
            "outcome": ENGINE_OUTCOME,
            "latency_ms": number(),
            "outputs": array(B64_TENSOR),
        }
    ),
)
ENGINE_DONE_CONTROL = document(
    "engine-done-control",
    "the terminal event of a cancel, ping or shutdown request",
    obj({"id": REQUEST_ID, "event": const("done")}, {"rss_bytes": NON_NEGATIVE}),
)
ENGINE_ERROR = document(
    "engine-error",
    "a request answered with an error by trt-edge-run --serve",
    obj(
        {
            "id": nullable(REQUEST_ID),
            "event": const("error"),
            "error": obj(
                {"kind": enum(*ENGINE_ERROR_KINDS), "message": string()},
                {"field": string()},
            ),
        }
    ),
)

# ---- the device side's own documents: the runner tarball, the agent, the fleet -------------
SHA256 = string(pattern="^[0-9a-f]{64}$")
RUNNER_BINARY = "bin/trt-edge-run"

# runner.json: `device_runner/cpp/tools/build_device_tarball.py` writes it into the tarball;
# the flash reads it before anything goes into a rootfs. `files` must list the runner itself.
RUNNER_TARBALL = document(
    "runner-tarball",
    "runner.json of a trt-edge-runner tarball",
    obj(
        {
            "name": const("trt-edge-runner"),
            "version": string(minLength=1),
            "arch": string(minLength=1),
            "files": {
                "type": "object",
                "properties": {RUNNER_BINARY: SHA256},
                "required": [RUNNER_BINARY],
                "additionalProperties": SHA256,
            },
        },
        {
            "executorch": string(),
            "system_libraries": array(string()),
            "symbol_versions": mapping(string()),
        },
    ),
)

# state.json (agent/store.py). Schemas 1 (no floors, history or trust) and 2 (no baseline
# spreads) are still read, and a document without `schema` is schema 1; the reader refuses
# a newer schema before this.
SLOT = enum("A", "B")


def _record(required: dict[str, Schema], optional: dict[str, Schema], closed: bool) -> Schema:
    """A record the agent keeps (a slot, a floor, an event). Closed in `state.json`, whose
    one reader builds it field by field and refuses a key it does not know; open where a
    device reports it to a fleet that may be older than the device."""
    return obj(required, optional, closed=closed)


def slot_info(closed: bool) -> Schema:
    return _record(
        {k: string() for k in ("name", "version", "bundle_sha256", "installed_at")},
        {
            "baseline_ms": mapping(number()),
            # The median absolute deviation of each phase's install runs; absent in a state
            # written before it was kept (health then judges without the spread term).
            "baseline_spread_ms": mapping(number(minimum=0)),
            "key_id": nullable(string()),
        },
        closed,
    )


def floor(closed: bool) -> Schema:
    return _record({"version": string(), "bundle_sha256": string()}, {}, closed)


def event(closed: bool) -> Schema:
    return _record(
        {"at": string(), "action": string(), "detail": string()},
        {"name": nullable(string()), "version": nullable(string())},
        closed,
    )


def slots_map(closed: bool) -> Schema:
    return obj({}, {s: nullable(slot_info(closed)) for s in ("A", "B")})


TRUST_RECORD = obj(
    {},
    {
        "rotations": array(OPEN_OBJECT),
        "revocations": nullable(OPEN_OBJECT),
        "revocations_version": integer(),
        "revoked": mapping(string()),
    },
)
STATE_CORE = {"active": nullable(SLOT), "previous": nullable(SLOT), "slots": slots_map(True)}
AGENT_STATE = document(
    "agent-state",
    "the device agent's state.json",
    {
        "anyOf": [
            obj(
                {
                    "schema": enum(2, 3),
                    **STATE_CORE,
                    "floors": mapping(floor(True)),
                    "history": array(event(True)),
                    "trust": TRUST_RECORD,
                },
                description="schema 3: what the agent writes; 2: the same without baseline spreads",
            ),
            obj(STATE_CORE, {"schema": const(1)}, description="schema 1: still read"),
        ]
    },
)

# device.json: an operator's per-device settings (agent/config.py). Every key is optional.
NON_NEGATIVE_NUMBER = number(minimum=0)
DEVICE_CONFIG = document(
    "device-config",
    "a device's settings, device.json",
    obj(
        {},
        {
            "health": obj(
                {},
                {
                    "max_latency_regression": nullable(NON_NEGATIVE_NUMBER),
                    "latency_budget_ms": nullable(NON_NEGATIVE_NUMBER),
                    "latency_noise_ms": nullable(NON_NEGATIVE_NUMBER),
                    "latency_spread_factor": nullable(NON_NEGATIVE_NUMBER),
                },
            ),
            "engine": enum("cpp", "python"),
            "runner": nullable(string(minLength=1)),
            "runner_timeout_s": number(exclusiveMinimum=0),
        },
    ),
)

# facts.json: overrides of detected facts (agent/facts.py); a value is kept as its string.
DEVICE_FACTS = document(
    "device-facts",
    "overrides of a device's detected facts, facts.json",
    mapping({"type": ["string", "number", "null"]}),
)

# `trt-edge-device status --json` (commands/status.py, agent/status_report.py). An older
# device reports no floors or history: the fleet reads every device of a rollout.
DEVICE_STATUS = document(
    "device-status",
    "trt-edge-device status --json",
    obj(
        {
            "active": nullable(SLOT),
            "previous": nullable(SLOT),
            "version": nullable(string()),
            "name": nullable(string()),
            "slots": slots_map(False),
        },
        {
            "previous_version": nullable(string()),
            "facts": mapping(nullable(string())),
            "recovered": array(string()),
            "floors": mapping(floor(False)),
            "history": array(event(False)),
        },
    ),
)

# `trt-edge-device health --json` (agent/health.py `HealthReport`).
DEVICE_HEALTH = document(
    "device-health",
    "trt-edge-device health --json",
    obj(
        {
            "ok": BOOLEAN,
            "slot": SLOT,
            "name": string(),
            "version": string(),
            "settings": obj(
                {
                    "max_latency_regression": NON_NEGATIVE_NUMBER,
                    "latency_budget_ms": nullable(NON_NEGATIVE_NUMBER),
                    "latency_noise_ms": NON_NEGATIVE_NUMBER,
                },
                {"latency_spread_factor": NON_NEGATIVE_NUMBER},  # absent from older devices
            ),
            "phases": array(
                obj(
                    {
                        "phase": string(),
                        "ok": BOOLEAN,
                        "latency_ms": nullable(number()),  # the median of `runs`
                        "baseline_ms": nullable(number()),
                    },
                    {
                        "reason": string(),
                        # Absent from older devices: what the judgement used and decided.
                        "runs": integer(minimum=1),
                        "spread_ms": nullable(number(minimum=0)),
                        "baseline_spread_ms": nullable(number(minimum=0)),
                        "allowed_ms": nullable(number()),
                        "limit_ms": nullable(number()),
                        "bound_by": nullable(enum("relative", "spread", "floor", "budget")),
                    },
                )
            ),
        },
        {"reason": string(), "engine": string()},
    ),
)

# What every `--json` device command prints on stdout when it fails (`TrtEdgeError.to_dict`).
COMMAND_ERROR = document(
    "command-error",
    "the error document of a failed trt-edge-device command under --json",
    obj(
        {
            "ok": const(False),
            "error": string(),
            "type": string(),
            "exit_code": integer(),
        },
        {"where": OPEN_OBJECT, "hint": string()},
    ),
)

# The fleet's per-device reports (sdk/trt_edge/fleet/playbook.py): each is a template Ansible
# renders on the device and copies back with `to_json`. Ansible gives a rendered value its
# native type or leaves it a string, by version: both spellings are declared.
FLAG = {"anyOf": [BOOLEAN, enum("True", "False", "true", "false")]}
WHOLE = {"anyOf": [integer(), string(pattern="^-?[0-9]+$")]}
TIMESTAMP = {"anyOf": [number(), string(pattern="^-?[0-9]+(\\.[0-9]*)?([eE][-+]?[0-9]+)?$")]}
FLEET_DEVICE_REPORT = document(
    "fleet-device-report",
    "a device's report of one rollout wave (status, trust, install, health)",
    obj(
        {"host": string(minLength=1), "stage": string(), "failed": FLAG},
        {
            **{
                key: string()
                for key in (
                    "failed_task",
                    "failed_msg",
                    "before",
                    "trust_stdout",
                    "trust_stderr",
                    "install_stdout",
                    "install_stderr",
                    "install_delta",
                    "health_stdout",
                    "health_stderr",
                    "health_delta",
                    "rollback_stderr",
                    "after",
                )
            },
            "rollback_rc": WHOLE,
            "t0": TIMESTAMP,
            "t1": TIMESTAMP,
        },
    ),
)
FLEET_ROLLBACK_REPORT = document(
    "fleet-rollback-report",
    "a device's report of a rollout's rollback run",
    obj(
        {"host": string(minLength=1), "rollback_rc": WHOLE},
        {"rollback_stderr": string(), "after": string()},
    ),
)
FLEET_METRICS_REPORT = document(
    "fleet-metrics-report",
    "a device's report of a rollout's live-traffic gate (two scrapes of /metrics)",
    obj(
        {"host": string(minLength=1), "url": string(), "status_0": WHOLE, "status_1": WHOLE},
        {key: string() for key in ("metrics_0", "metrics_1", "error_0", "error_1")},
    ),
)

# ---- pull fleets: reports and commands over MQTT (trt_edge_runner/link) --------------------
# A device behind NAT connects out to a broker; these documents cross it. Reports a device
# sends are open (the fleet reads devices of other versions); what a device is told is closed,
# so a misspelt field is refused naming it, never silently ignored.
LINK_SCHEMA_VERSION = 1
PULL_TARGET = obj({"reference": string(minLength=1), "version": string(minLength=1)}, closed=True)

# ROOT/desired.json: what the link was told, read by the follower (`trt-edge-device follow`)
# on every poll. `hold` stops new installs; `target` pins one reference instead of the channel.
DESIRED = document(
    "desired",
    "what a pull device was told to run, ROOT/desired.json",
    obj(
        {
            "schema_version": const(LINK_SCHEMA_VERSION),
            "hold": BOOLEAN,
            "target": nullable(PULL_TARGET),
            "command_id": string(),
            "issued_at": string(),
        },
        closed=True,
    ),
)

# trt-edge/<fleet>/<device>/command: a rollout command (the operator → one device).
LINK_COMMAND = document(
    "link-command",
    "a command to one device, on trt-edge/<fleet>/<device>/command",
    obj(
        {
            "schema_version": const(LINK_SCHEMA_VERSION),
            "command_id": string(minLength=1),
            "action": enum("update", "hold", "resume", "rollback"),
            "issued_at": string(),
        },
        {"target": nullable(PULL_TARGET)},
        closed=True,
    ),
)

# trt-edge/<fleet>/<device>/ack: what became of one command.
LINK_ACK = document(
    "link-ack",
    "a device's answer to one command, on trt-edge/<fleet>/<device>/ack",
    obj(
        {
            "schema_version": integer(),
            "device": string(),
            "command_id": nullable(string()),
            "outcome": enum("done", "refused", "failed"),
            "message": string(),
            "at": string(),
        },
        {"field": nullable(string()), "action": nullable(string())},
    ),
)

LINK_HEALTH = obj(
    {"ok": BOOLEAN, "version": nullable(string()), "reason": string(), "at": string()}
)
# trt-edge/<fleet>/<device>/state (retained): what the device runs and how it is doing.
LINK_STATE = document(
    "link-state",
    "a device's retained state, on trt-edge/<fleet>/<device>/state",
    obj(
        {
            "schema_version": integer(),
            "device": string(),
            "name": nullable(string()),
            "version": nullable(string()),
            "slot": nullable(SLOT),
            "previous_version": nullable(string()),
            "at": string(),
        },
        {
            "health": nullable(LINK_HEALTH),
            "metrics": nullable(string()),
            "metrics_error": nullable(string()),
            "desired": nullable(OPEN_OBJECT),
            "agent_error": nullable(string()),
        },
    ),
)

# trt-edge/<fleet>/<device>/online (retained; the broker publishes `false` as the will).
LINK_PRESENCE = document(
    "link-presence",
    "whether a device's link is connected, on trt-edge/<fleet>/<device>/online",
    obj({"schema_version": integer(), "online": BOOLEAN}),
)

# `trt-edge fleet status --json` (sdk/trt_edge/fleet/mqtt/status_view.py): the fleet as the
# broker holds it.
FLEET_STATUS = document(
    "fleet-status",
    "trt-edge fleet status --json",
    obj(
        {
            "schema_version": const(LINK_SCHEMA_VERSION),
            "fleet": string(),
            "devices": array(
                obj(
                    {
                        "device": string(),
                        "online": nullable(BOOLEAN),
                        "name": nullable(string()),
                        "version": nullable(string()),
                        "slot": nullable(SLOT),
                        "previous_version": nullable(string()),
                        "health": nullable(LINK_HEALTH),
                        "last_seen": nullable(string()),
                        "hold": nullable(BOOLEAN),
                        "problems": array(string()),
                    }
                )
            ),
        }
    ),
)

# The follower's own record (`ROOT/follow/state.json`, follow/follower_state.py): what the
# last poll of a channel found and did, read back by the next poll and by operators.
FOLLOWER_STATE_VERSION = 1
FOLLOWER_STATE = document(
    "follower-state",
    "trt-edge-device follow: ROOT/follow/state.json",
    obj(
        {
            "schema": const(FOLLOWER_STATE_VERSION),
            "reference": string(minLength=1),
            "checked_at": string(),
            "outcome": enum("installed", "up_to_date", "held", "refused", "error"),
            "detail": string(),
            "failures": NON_NEGATIVE,
            "bytes_fetched": NON_NEGATIVE,
            "bytes_fetched_total": NON_NEGATIVE,
            "blobs_fetched": NON_NEGATIVE,
            "blobs_reused": NON_NEGATIVE,
        },
        {
            "manifest_digest": nullable(string()),
            "installed_digest": nullable(string()),
            "refused_digest": nullable(string()),
        },
    ),
)

# Registry credentials (`follow --credentials`, `publish --credentials`): basic auth or a
# bearer token; a file the operator writes (mode 0600), never a command-line argument.
REGISTRY_CREDENTIALS = document(
    "registry-credentials",
    "credentials for an OCI registry: {username, password} or {token}",
    {
        "anyOf": [
            obj({"username": string(minLength=1), "password": string()}, closed=True),
            obj({"token": string(minLength=1)}, closed=True),
        ]
    },
)

# name -> schema: the files `python -m trt_edge_runner.schemas --write` writes.
SCHEMAS: dict[str, Schema] = {
    s["$id"].removeprefix(ID_BASE).removesuffix(".schema.json"): s
    for s in (
        BUNDLE,
        RUNNER_VERSION,
        RUNNER_LOAD,
        RUNNER_RUN,
        RUNNER_PHASES,
        RUNNER_GENERATE,
        RUNNER_ERROR,
        ENGINE_REQUEST,
        ENGINE_READY,
        ENGINE_TOKEN,
        ENGINE_DONE_GENERATE,
        ENGINE_DONE_INFER,
        ENGINE_DONE_CONTROL,
        ENGINE_ERROR,
        RUNNER_TARBALL,
        AGENT_STATE,
        DEVICE_CONFIG,
        DEVICE_FACTS,
        DEVICE_STATUS,
        DEVICE_HEALTH,
        COMMAND_ERROR,
        FLEET_DEVICE_REPORT,
        FLEET_ROLLBACK_REPORT,
        FLEET_METRICS_REPORT,
        DESIRED,
        LINK_COMMAND,
        LINK_ACK,
        LINK_STATE,
        LINK_PRESENCE,
        FLEET_STATUS,
        FOLLOWER_STATE,
        REGISTRY_CREDENTIALS,
    )
}
