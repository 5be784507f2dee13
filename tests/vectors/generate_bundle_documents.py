"""Writes `bundle_documents.json`: bundle.json documents and the verdict every reader must reach.

Each case is a whole document (so any reader, Python or C++, needs no patching logic) and
either `"valid": true` or the `field` (a JSON path as trt-edge prints it, `io.inputs[0].name`)
the reader must name when it refuses it. `refused_by`: `schema` when
`trt_edge_runner/schemas/bundle.schema.json` itself refuses it, `reader` when the rule is one
a schema cannot state (a version, a name that must be an input). Held by
tests/runner/test_schemas.py (the Python reader, and our validator against `jsonschema`).
Regenerate with:

    .venv/bin/python tests/vectors/generate_bundle_documents.py   # --check: compare only
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

from vector_file import vector_document, write_or_check

OUT = Path(__file__).with_name("bundle_documents.json")

SHA = "0" * 64
BASE: dict[str, Any] = {
    "schema_version": 1,
    "model": {"name": "tiny-llm", "version": "1.0.0"},
    "backend": "xnnpack",
    "target": {"id": "cpu-x86_64", "arch": "x86_64"},
    "io": {
        "method": "forward",
        "inputs": [
            {"name": "input_ids", "dtype": "int64", "shape": [1, "seq"], "values": [0, 64]},
            {"name": "start_pos", "dtype": "int64", "shape": [1], "values": [0, 32]},
            {"name": "cache", "dtype": "float32", "shape": [2, 32, 8], "values": None},
        ],
        "outputs": [
            {"name": "logits", "dtype": "float32", "shape": [1, "seq", 64], "values": None},
            {"name": "cache_out", "dtype": "float32", "shape": [2, 32, 8], "values": None},
        ],
    },
    "profiles": [
        {
            "index": 0,
            "name": "decode",
            "dims": {"seq": {"min": 1, "opt": 1, "max": 1}},
            "bounds": [
                {"input": "input_ids", "min": [1, 1], "max": [1, 1]},
                {"input": "start_pos", "min": [1], "max": [1]},
                {"input": "cache", "min": [2, 32, 8], "max": [2, 32, 8]},
            ],
        },
        {
            "index": 1,
            "name": "prefill",
            "dims": {"seq": {"min": 2, "opt": 8, "max": 16}},
            "bounds": [
                {"input": "input_ids", "min": [1, 2], "max": [1, 16]},
                {"input": "start_pos", "min": [1], "max": [1]},
                {"input": "cache", "min": [2, 32, 8], "max": [2, 32, 8]},
            ],
        },
    ],
    "runtime": {"policy": "pinned", "phases": {"decode": 0, "prefill": 1}},
    "files": {
        "model.pte": {"sha256": SHA, "size": 1234},
        "reports/validation.json": {"sha256": "1" * 64, "size": 10},
    },
    "delegates": [
        {
            "backend_id": "XnnpackBackend",
            "method": "forward",
            "index": 0,
            "blob_size": 100,
            "profile_signature": None,
        }
    ],
    "provenance": {"trt_edge": "0.1.0"},
    "generation": {
        "version": 1,
        "contract": "tiny_llm",
        "tokens": "input_ids",
        "start_position": "start_pos",
        "logits": "logits",
    },
}
LLM: dict[str, Any] = {
    "version": 1,
    "method": "forward",
    "max_cache_len": 32,
    "vocab_size": 64,
    "inputs": {"tokens": "input_ids", "positions": "cache_position"},
    "logits": "logits",
    "eos_token_ids": [1],
    "bos_token_id": 2,
    "pad_token_id": None,
    "tokenizer": "tokenizer.json",
    "adds_bos": False,
    "prepend_bos": True,
    "requires_zeroed_planned_memory": True,
    "cache_buffers": ["k0", "v0"],
    "architecture": "Gemma3ForCausalLM",
    "chat_template": "{{ messages }}",
    "special_tokens": {"bos_token": "<bos>"},
}


MEMORY = {
    "weights_bytes": 10,
    "planned_bytes": 20,
    "kv_cache_bytes": 5,
    "runner_bytes": 1,
    "total_bytes": 36,
}


def causal() -> dict[str, Any]:
    d = copy.deepcopy(BASE)
    del d["generation"]
    d["io"]["inputs"] = [
        {"name": "input_ids", "dtype": "int64", "shape": [1, "seq"], "values": [0, 64]},
        {"name": "cache_position", "dtype": "int64", "shape": ["seq"], "values": [0, 32]},
    ]
    d["io"]["outputs"] = [{"name": "logits", "dtype": "float32", "shape": [1, 64], "values": None}]
    for p in d["profiles"]:
        p["bounds"] = [
            *p["bounds"][:1],
            {
                "input": "cache_position",
                "min": [p["dims"]["seq"]["min"]],
                "max": [p["dims"]["seq"]["max"]],
            },
        ]
    d["files"]["tokenizer.json"] = {"sha256": "2" * 64, "size": 5}
    d["llm"] = copy.deepcopy(LLM)
    return d


def filled() -> dict[str, Any]:
    """A causal LM built with `attention: filled`: llm section version 2, a third input."""
    d = causal()
    d["io"]["inputs"].append(
        {"name": "cache_window", "dtype": "int64", "shape": ["window"], "values": None}
    )
    for p in d["profiles"]:
        p["dims"]["window"] = {"min": 1, "opt": 32, "max": 32}
        p["bounds"].append({"input": "cache_window", "min": [1], "max": [32]})
    d["llm"].update(version=2, window_bucket=16)
    d["llm"]["inputs"]["window"] = "cache_window"
    return d


def at(doc: Any, path: list[Any]) -> tuple[Any, Any]:
    *parents, last = path
    for p in parents:
        doc = doc[p]
    return doc, last


def setv(path: list[Any], value: Any) -> Callable[[dict[str, Any]], None]:
    def f(d: dict[str, Any]) -> None:
        o, k = at(d, path)
        o[k] = value

    return f


def delv(path: list[Any]) -> Callable[[dict[str, Any]], None]:
    def f(d: dict[str, Any]) -> None:
        o, k = at(d, path)
        del o[k]

    return f


def vec(
    name: str,
    why: str,
    fn: Callable[[dict[str, Any]], Any] | None = None,
    *,
    base: dict[str, Any] | None = None,
    valid: bool,
    field: str | None = None,
    by: str = "schema",
) -> dict[str, Any]:
    d = copy.deepcopy(base if base is not None else BASE)
    if fn:
        fn(d)
    out: dict[str, Any] = {"name": name, "why": why, "valid": valid, "document": d}
    if not valid:
        out["field"] = field
        out["refused_by"] = by
    return out


V = [
    vec("tiny_llm", "a tiny-LLM bundle with its generation contract", valid=True),
    vec(
        "causal_lm",
        "a causal-LM bundle (llm section, chat template, special tokens)",
        base=causal(),
        valid=True,
    ),
    vec(
        "causal_lm_window",
        "a causal-LM bundle built with `attention: filled` (llm version 2, inputs.window)",
        base=filled(),
        valid=True,
    ),
    vec(
        "llm_version_3",
        "an llm section version this reader does not know",
        setv(["llm", "version"], 3),
        base=filled(),
        valid=False,
        field="llm.version",
        by="reader",
    ),
    vec(
        "llm_window_role_missing",
        "llm version 2 without inputs.window",
        delv(["llm", "inputs", "window"]),
        base=filled(),
        valid=False,
        field="llm.inputs.window",
        by="reader",
    ),
    vec(
        "llm_window_not_an_input",
        "llm version 2 whose inputs.window names no input",
        setv(["llm", "inputs", "window"], "window_slots"),
        base=filled(),
        valid=False,
        field="llm.inputs.window",
        by="reader",
    ),
    vec(
        "llm_window_bucket_missing",
        "llm version 2 without window_bucket",
        delv(["llm", "window_bucket"]),
        base=filled(),
        valid=False,
        field="llm.window_bucket",
        by="reader",
    ),
    vec(
        "llm_window_bucket_zero",
        "a window bucket below 1",
        setv(["llm", "window_bucket"], 0),
        base=filled(),
        valid=False,
        field="llm.window_bucket",
    ),
    vec(
        "plain",
        "a bundle without generation, delegates or provenance",
        lambda d: [d.pop(k) for k in ("generation", "delegates", "provenance")],
        valid=True,
    ),
    vec(
        "memory_and_quantization",
        "the optional memory and quantization sections",
        lambda d: d.update(
            memory=dict(MEMORY),
            quantization={"scheme": "int8_weight_only"},
        ),
        valid=True,
    ),
    vec(
        "null_sections",
        "llm, generation and memory null: read as absent",
        lambda d: d.update(llm=None, generation=None, memory=None),
        valid=True,
    ),
    vec(
        "memory_key_missing",
        "a memory section without its total",
        setv(["memory"], {k: v for k, v in MEMORY.items() if k != "total_bytes"}),
        valid=False,
        field="memory.total_bytes",
    ),
    vec(
        "unknown_section",
        "a section a newer writer added: ignored by this reader",
        setv(["future_section"], {"x": 1}),
        valid=True,
    ),
    vec(
        "auto_phase",
        "an auto policy with an auto phase",
        lambda d: d["runtime"].update(policy="auto", phases={"decode": "auto", "prefill": 1}),
        valid=True,
    ),
    vec(
        "schema_version_2",
        "a schema version this reader does not know",
        setv(["schema_version"], 2),
        valid=False,
        field="schema_version",
        by="reader",
    ),
    vec(
        "schema_version_missing",
        "no schema_version",
        delv(["schema_version"]),
        valid=False,
        field="schema_version",
    ),
    vec("model_missing", "no model", delv(["model"]), valid=False, field="model"),
    vec(
        "model_name_number",
        "model.name a number",
        setv(["model", "name"], 3),
        valid=False,
        field="model.name",
    ),
    vec(
        "input_name_missing",
        "an input without a name",
        delv(["io", "inputs", 0, "name"]),
        valid=False,
        field="io.inputs[0].name",
    ),
    vec(
        "shape_float",
        "a shape entry 1.5",
        setv(["io", "inputs", 0, "shape", 1], 1.5),
        valid=False,
        field="io.inputs[0].shape[1]",
    ),
    vec(
        "shape_bool",
        "a shape entry true",
        setv(["io", "inputs", 0, "shape", 0], True),
        valid=False,
        field="io.inputs[0].shape[0]",
    ),
    vec(
        "values_three",
        "values with three bounds",
        setv(["io", "inputs", 0, "values"], [0, 1, 2]),
        valid=False,
        field="io.inputs[0].values",
    ),
    vec(
        "dim_min_string",
        "a profile bound as a string",
        setv(["profiles", 0, "dims", "seq", "min"], "1"),
        valid=False,
        field="profiles[0].dims.seq.min",
    ),
    vec(
        "profile_symbol_missing",
        "a profile without a symbol an input uses",
        setv(["profiles", 0, "dims"], {}),
        valid=False,
        field="profiles[0].dims",
        by="reader",
    ),
    vec(
        "policy_unknown",
        "a policy that is neither pinned nor auto",
        setv(["runtime", "policy"], "sometimes"),
        valid=False,
        field="runtime.policy",
    ),
    vec(
        "phase_negative",
        "a phase mapped to -1",
        setv(["runtime", "phases", "decode"], -1),
        valid=False,
        field="runtime.phases.decode",
    ),
    vec(
        "phase_word",
        "a phase mapped to a word other than auto",
        setv(["runtime", "phases", "decode"], "fast"),
        valid=False,
        field="runtime.phases.decode",
    ),
    vec(
        "sha256_short",
        "a file digest that is not 64 hex digits",
        setv(["files", "model.pte", "sha256"], "abc"),
        valid=False,
        field="files.model.pte.sha256",
    ),
    vec(
        "size_negative",
        "a negative file size",
        setv(["files", "model.pte", "size"], -1),
        valid=False,
        field="files.model.pte.size",
    ),
    vec(
        "delegate_index_missing",
        "a delegate without an index",
        delv(["delegates", 0, "index"]),
        valid=False,
        field="delegates[0].index",
    ),
    vec(
        "generation_contract_unknown",
        "a generation contract this reader does not know",
        setv(["generation", "contract"], "other"),
        valid=False,
        field="generation.contract",
    ),
    vec(
        "generation_tokens_missing",
        "a generation contract without its tokens input",
        delv(["generation", "tokens"]),
        valid=False,
        field="generation.tokens",
    ),
    vec(
        "generation_version_2",
        "a generation section version this reader does not know",
        setv(["generation", "version"], 2),
        valid=False,
        field="generation.version",
        by="reader",
    ),
    vec(
        "generation_tokens_not_an_input",
        "the tokens input names no input",
        setv(["generation", "tokens"], "ids"),
        valid=False,
        field="generation.tokens",
        by="reader",
    ),
    vec(
        "generation_logits_not_an_output",
        "the logits output names no output",
        setv(["generation", "logits"], "scores"),
        valid=False,
        field="generation.logits",
        by="reader",
    ),
    vec(
        "memory_string",
        "a memory figure as a string",
        setv(["memory"], {**MEMORY, "total_bytes": "1GB"}),
        valid=False,
        field="memory.total_bytes",
    ),
    vec(
        "chat_template_number",
        "a chat template that is not a string",
        setv(["llm", "chat_template"], 5),
        base=causal(),
        valid=False,
        field="llm.chat_template",
    ),
    vec(
        "special_token_number",
        "a special token that is not a string",
        setv(["llm", "special_tokens"], {"eos_token": 1}),
        base=causal(),
        valid=False,
        field="llm.special_tokens.eos_token",
    ),
    vec(
        "llm_tokenizer_unlisted",
        "a tokenizer file not listed in files",
        setv(["llm", "tokenizer"], "other.json"),
        base=causal(),
        valid=False,
        field="llm.tokenizer",
        by="reader",
    ),
]
DESCRIPTION = (
    "bundle.json documents and the verdict every bundle.json reader must reach: valid, or "
    "refused naming `field`. Written by tests/vectors/generate_bundle_documents.py."
)

if __name__ == "__main__":
    write_or_check(OUT, vector_document(V, DESCRIPTION, {"format": 1}))
