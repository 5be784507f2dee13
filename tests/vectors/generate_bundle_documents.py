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


def slotted() -> dict[str, Any]:
    """A causal LM built with `runtime.slots: 4`: llm section version 3, a batch dim and the
    slot input each row names its cache with."""
    d = causal()
    d["io"]["inputs"] = [
        {"name": "input_ids", "dtype": "int64", "shape": ["batch", "seq"], "values": [0, 64]},
        {"name": "cache_position", "dtype": "int64", "shape": ["batch", "seq"], "values": [0, 32]},
        {"name": "cache_slot", "dtype": "int64", "shape": ["batch"], "values": [0, 4]},
    ]
    d["io"]["outputs"] = [
        {"name": "logits", "dtype": "float32", "shape": ["batch", 64], "values": None}
    ]
    for p, batch in zip(d["profiles"], (4, 1), strict=True):
        seq = p["dims"]["seq"]
        p["dims"]["batch"] = {"min": 1, "opt": batch, "max": batch}
        p["bounds"] = [
            {"input": name, "min": [1, seq["min"]], "max": [batch, seq["max"]]}
            for name in ("input_ids", "cache_position")
        ] + [{"input": "cache_slot", "min": [1], "max": [batch]}]
    d["llm"].update(version=3, slots=4)
    d["llm"]["inputs"]["slot"] = "cache_slot"
    return d


DELETE = object()  # `refused`'s value that removes the field instead of setting it


def field_name(path: list[Any]) -> str:
    """A JSON path as trt-edge prints it: `io.inputs[0].shape[1]`, `files.model.pte.size`."""
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".")


def edited(path: list[Any], value: Any, base: dict[str, Any]) -> dict[str, Any]:
    """A copy of `base` with the field at `path` set to `value` (removed for DELETE)."""
    d = copy.deepcopy(base)
    *parents, last = path
    o = d
    for p in parents:
        o = o[p]
    if value is DELETE:
        del o[last]
    else:
        o[last] = value
    return d


def valid(name: str, why: str, document: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "why": why, "valid": True, "document": document}


def refused(
    name: str,
    why: str,
    path: list[Any],
    value: Any = DELETE,
    *,
    base: dict[str, Any] = BASE,
    by: str = "schema",
    field: str | None = None,
) -> dict[str, Any]:
    """`base` with one field edited: the reader refuses it naming that field (or `field`
    when the refusal is deeper than the edit); `by`: `schema` or `reader` (module doc)."""
    field = field or field_name(path)
    document = edited(path, value, base)
    return {**valid(name, why, document), "valid": False, "field": field, "refused_by": by}


def without(d: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {k: v for k, v in d.items() if k not in keys}


CAUSAL = causal()
FILLED = filled()
SLOTTED = slotted()
V = [
    valid("tiny_llm", "a tiny-LLM bundle with its generation contract", copy.deepcopy(BASE)),
    valid("causal_lm", "a causal-LM bundle (llm section, chat template, special tokens)", CAUSAL),
    valid(
        "causal_lm_window",
        "a causal-LM bundle built with `attention: filled` (llm version 2, inputs.window)",
        FILLED,
    ),
    valid(
        "causal_lm_slots",
        "a causal-LM bundle built with `runtime.slots` (llm version 3, inputs.slot, slots)",
        SLOTTED,
    ),
    refused(
        "llm_slot_not_an_input",
        "llm version 3 whose inputs.slot names no input",
        ["llm", "inputs", "slot"],
        "slot_ids",
        base=SLOTTED,
        by="reader",
    ),
    refused(
        "llm_slot_role_missing",
        "llm version 3 without inputs.slot",
        ["llm", "inputs", "slot"],
        base=SLOTTED,
        by="reader",
    ),
    refused(
        "llm_version_4",
        "an llm section version this reader does not know",
        ["llm", "version"],
        4,
        base=FILLED,
        by="reader",
    ),
    refused(
        "llm_window_role_missing",
        "llm version 2 without inputs.window",
        ["llm", "inputs", "window"],
        base=FILLED,
        by="reader",
    ),
    refused(
        "llm_window_not_an_input",
        "llm version 2 whose inputs.window names no input",
        ["llm", "inputs", "window"],
        "window_slots",
        base=FILLED,
        by="reader",
    ),
    refused(
        "llm_window_bucket_missing",
        "llm version 2 without window_bucket",
        ["llm", "window_bucket"],
        base=FILLED,
        by="reader",
    ),
    refused(
        "llm_window_bucket_zero",
        "a window bucket below 1",
        ["llm", "window_bucket"],
        0,
        base=FILLED,
    ),
    valid(
        "plain",
        "a bundle without generation, delegates or provenance",
        without(BASE, "generation", "delegates", "provenance"),
    ),
    valid(
        "memory_and_quantization",
        "the optional memory and quantization sections",
        {**BASE, "memory": MEMORY, "quantization": {"scheme": "int8_weight_only"}},
    ),
    valid(
        "null_sections",
        "llm, generation and memory null: read as absent",
        {**BASE, "llm": None, "generation": None, "memory": None},
    ),
    refused(
        "memory_key_missing",
        "a memory section without its total",
        ["memory"],
        without(MEMORY, "total_bytes"),
        field="memory.total_bytes",
    ),
    valid(
        "unknown_section",
        "a section a newer writer added: ignored by this reader",
        {**BASE, "future_section": {"x": 1}},
    ),
    valid(
        "auto_phase",
        "an auto policy with an auto phase",
        edited(["runtime"], {"policy": "auto", "phases": {"decode": "auto", "prefill": 1}}, BASE),
    ),
    refused(
        "schema_version_2",
        "a schema version this reader does not know",
        ["schema_version"],
        2,
        by="reader",
    ),
    refused("schema_version_missing", "no schema_version", ["schema_version"]),
    refused("model_missing", "no model", ["model"]),
    refused("model_name_number", "model.name a number", ["model", "name"], 3),
    refused("input_name_missing", "an input without a name", ["io", "inputs", 0, "name"]),
    refused("shape_float", "a shape entry 1.5", ["io", "inputs", 0, "shape", 1], 1.5),
    refused("shape_bool", "a shape entry true", ["io", "inputs", 0, "shape", 0], True),
    refused("values_three", "values with three bounds", ["io", "inputs", 0, "values"], [0, 1, 2]),
    refused(
        "dim_min_string", "a profile bound as a string", ["profiles", 0, "dims", "seq", "min"], "1"
    ),
    refused(
        "profile_symbol_missing",
        "a profile without a symbol an input uses",
        ["profiles", 0, "dims"],
        {},
        by="reader",
    ),
    refused(
        "policy_unknown",
        "a policy that is neither pinned nor auto",
        ["runtime", "policy"],
        "sometimes",
    ),
    refused("phase_negative", "a phase mapped to -1", ["runtime", "phases", "decode"], -1),
    refused(
        "phase_word",
        "a phase mapped to a word other than auto",
        ["runtime", "phases", "decode"],
        "fast",
    ),
    refused(
        "sha256_short",
        "a file digest that is not 64 hex digits",
        ["files", "model.pte", "sha256"],
        "abc",
    ),
    refused("size_negative", "a negative file size", ["files", "model.pte", "size"], -1),
    refused("delegate_index_missing", "a delegate without an index", ["delegates", 0, "index"]),
    refused(
        "generation_contract_unknown",
        "a generation contract this reader does not know",
        ["generation", "contract"],
        "other",
    ),
    refused(
        "generation_tokens_missing",
        "a generation contract without its tokens input",
        ["generation", "tokens"],
    ),
    refused(
        "generation_version_2",
        "a generation section version this reader does not know",
        ["generation", "version"],
        2,
        by="reader",
    ),
    refused(
        "generation_tokens_not_an_input",
        "the tokens input names no input",
        ["generation", "tokens"],
        "ids",
        by="reader",
    ),
    refused(
        "generation_logits_not_an_output",
        "the logits output names no output",
        ["generation", "logits"],
        "scores",
        by="reader",
    ),
    refused(
        "memory_string",
        "a memory figure as a string",
        ["memory"],
        {**MEMORY, "total_bytes": "1GB"},
        field="memory.total_bytes",
    ),
    refused(
        "chat_template_number",
        "a chat template that is not a string",
        ["llm", "chat_template"],
        5,
        base=CAUSAL,
    ),
    refused(
        "special_token_number",
        "a special token that is not a string",
        ["llm", "special_tokens"],
        {"eos_token": 1},
        base=CAUSAL,
        field="llm.special_tokens.eos_token",
    ),
    refused(
        "llm_tokenizer_unlisted",
        "a tokenizer file not listed in files",
        ["llm", "tokenizer"],
        "other.json",
        base=CAUSAL,
        by="reader",
    ),
]
DESCRIPTION = (
    "bundle.json documents and the verdict every bundle.json reader must reach: valid, or "
    "refused naming `field`. Written by tests/vectors/generate_bundle_documents.py."
)

if __name__ == "__main__":
    write_or_check(OUT, vector_document(V, DESCRIPTION, {"format": 1}))
