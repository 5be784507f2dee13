"""The `bundle.json` contract between the host (writer) and the device (readers).

A bundle is a directory::

    model.pte                  the ExecuTorch program
    model.ptd                  optional external data
    tokenizer.json             optional: a causal LM's tokenizer (see `LlmSection`)
    reports/validation.json    what the build's validation measured
    bundle.json                this document
    bundle.sig                 optional detached ed25519 signature over canonical bundle.json

`bundle.json` lists every other file with its sha256 and size (except itself and
`bundle.sig`), so one signature over it covers the whole directory. The host
side builds a `BundleManifest` and writes `to_canonical_json()`; the device side
reads it with `BundleManifest.from_json()` and never imports the host package.

Only the standard library is used here: this module ships to devices.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from trt_edge_runner.errors import TrtEdgeError
from trt_edge_runner.json_documents import parse_json_object
from trt_edge_runner.schemas import check

SCHEMA_VERSION = 1
BUNDLE_JSON = "bundle.json"
BUNDLE_SIG = "bundle.sig"
MODEL_PTE = "model.pte"

# Files the hash list cannot contain: the document itself and its signature.
UNLISTED_FILES = frozenset({BUNDLE_JSON, BUNDLE_SIG})

PhaseTarget = int | Literal["auto"]


class BundleFormatError(TrtEdgeError, ValueError):
    """`bundle.json` is not a document this runner understands; the message says where."""


@dataclass(frozen=True)
class DimRange:
    """One symbol's extent in one profile (TensorRT's min/opt/max shape triple, per dim)."""

    min: int
    opt: int
    max: int


@dataclass(frozen=True)
class TensorSpec:
    """One input or output: `shape` mixes static ints and symbol names, e.g. `[1, "seq"]`."""

    name: str
    dtype: str
    shape: tuple[int | str, ...]
    values: tuple[int, int] | None = None  # [low, high) for integer inputs

    def dims_for(self, symbols: dict[str, int]) -> tuple[int, ...]:
        """Concrete shape with each symbol replaced by its value in `symbols`."""
        return tuple(d if isinstance(d, int) else symbols[d] for d in self.shape)


@dataclass(frozen=True)
class Profile:
    """One optimization profile; its position in `BundleManifest.profiles` is its index."""

    name: str
    dims: dict[str, DimRange]

    def bounds(
        self, inputs: tuple[TensorSpec, ...]
    ) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
        """Per input, the (min shape, max shape) this profile accepts."""
        rows = []
        for spec in inputs:
            lo = tuple(d if isinstance(d, int) else self.dims[d].min for d in spec.shape)
            hi = tuple(d if isinstance(d, int) else self.dims[d].max for d in spec.shape)
            rows.append((lo, hi))
        return rows

    def opt_symbols(self) -> dict[str, int]:
        return {sym: r.opt for sym, r in self.dims.items()}


@dataclass(frozen=True)
class RuntimePolicy:
    """`pinned`: every phase names a profile index. `auto`: phases may be an index or `auto`."""

    policy: Literal["pinned", "auto"]
    phases: dict[str, PhaseTarget]


@dataclass(frozen=True)
class FileEntry:
    sha256: str
    size: int


@dataclass(frozen=True)
class DelegateInfo:
    """One backend delegate inside the `.pte`; `profile_signature` and `engine` only for
    TensorRT (`engine`: what the builder was given and reported, `EngineRecord`)."""

    backend_id: str
    method: str
    index: int
    blob_size: int
    profile_signature: dict[str, Any] | None = None
    engine: EngineRecord | None = None

    def to_dict(self) -> dict[str, Any]:
        """The delegate as bundle.json lists it (and the validation report repeats it)."""
        doc: dict[str, Any] = {
            "backend_id": self.backend_id,
            "method": self.method,
            "index": self.index,
            "blob_size": self.blob_size,
            "profile_signature": self.profile_signature,
        }
        if self.engine is not None:
            doc["engine"] = self.engine.to_dict()
        return doc


@dataclass(frozen=True)
class EngineIO:
    """One network input or output as TensorRT parsed it (-1: a dynamic extent)."""

    name: str
    dtype: str
    shape: tuple[int, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "dtype": self.dtype, "shape": list(self.shape)}


@dataclass(frozen=True)
class EngineProfile:
    """One optimization profile as set on the builder: per dynamic input, the (min, opt,
    max) shapes read back from TensorRT's `IOptimizationProfile`."""

    index: int
    name: str
    shapes: dict[str, tuple[tuple[int, ...], ...]]

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "name": self.name,
            "shapes": {
                n: {"min": list(lo), "opt": list(opt), "max": list(hi)}
                for n, (lo, opt, hi) in self.shapes.items()
            },
        }


ENGINE_SOURCES = ("builder", "engine")

# Why a TensorRT-RTX bundle runs nowhere yet: every runner refuses it with this sentence.
RTX_RUNTIME_MISSING = (
    "no ExecuTorch runtime backend runs TensorRT-RTX engines: upstream's TensorRTBackend "
    "(pytorch/TensorRT's ExecuTorch delegate) links regular TensorRT's libnvinfer, and "
    "TensorRT-RTX's C++ SDK is not packaged where trt-edge-run is built"
)


def rtx_refusal(source: str, delegates: tuple[DelegateInfo, ...]) -> str | None:
    """The refusal of a bundle holding TensorRT-RTX engines (None: it holds none)."""
    rtx = [
        d.engine for d in delegates if d.engine is not None and d.engine.flavour == "tensorrt_rtx"
    ]
    if not rtx:
        return None
    sms = ", ".join(rtx[0].compute_capabilities) or "the default set"
    return (
        f"{source}: holds TensorRT-RTX {rtx[0].version} engines (compute capability {sms}); "
        f"{RTX_RUNTIME_MISSING}. Build for a CPU target (--backend xnnpack) or a regular "
        "TensorRT target (jetson-*, x86-ampere/ada/hopper/blackwell) to run it on a device"
    )


@dataclass(frozen=True)
class EngineRecord:
    """What the build knows about one TensorRT engine, recorded where the engine is built.

    `flavour` (`tensorrt` or `tensorrt_rtx`) and `version` tie the engine to the TensorRT
    release that built it (engines run on that release only); `compute_capabilities` are the
    SMs a TensorRT-RTX engine was built for (empty: the GPU regular TensorRT built on).
    `weights_bytes` / `activation_bytes` (one per profile) are the builder's own memory
    report, None/empty where it gave none. `source` says what the profiles were read from:
    `builder` (what the builder was given, read back from its profile objects) or `engine`
    (a deserialized engine's own table, on a machine with a GPU). docs/tensorrt.md.
    """

    flavour: str
    version: str
    compute_capabilities: tuple[str, ...]
    precision: str
    onnx_opset: int
    inputs: tuple[EngineIO, ...]
    outputs: tuple[EngineIO, ...]
    profiles: tuple[EngineProfile, ...]
    weights_bytes: int | None
    activation_bytes: tuple[int, ...]
    engine_bytes: int
    engine_sha256: str
    source: str = "builder"

    def to_dict(self) -> dict[str, Any]:
        return {
            "flavour": self.flavour,
            "version": self.version,
            "compute_capabilities": list(self.compute_capabilities),
            "precision": self.precision,
            "onnx_opset": self.onnx_opset,
            "inputs": [t.to_dict() for t in self.inputs],
            "outputs": [t.to_dict() for t in self.outputs],
            "profiles": [p.to_dict() for p in self.profiles],
            "weights_bytes": self.weights_bytes,
            "activation_bytes": list(self.activation_bytes),
            "engine_bytes": self.engine_bytes,
            "engine_sha256": self.engine_sha256,
            "source": self.source,
        }

    @classmethod
    def from_dict(cls, doc: dict[str, Any]) -> EngineRecord:
        """From a document already held to the schema (`ENGINE_RECORD` in schemas)."""

        def io(items: list[dict[str, Any]]) -> tuple[EngineIO, ...]:
            return tuple(EngineIO(t["name"], t["dtype"], tuple(t["shape"])) for t in items)

        return cls(
            flavour=doc["flavour"],
            version=doc["version"],
            compute_capabilities=tuple(doc["compute_capabilities"]),
            precision=doc["precision"],
            onnx_opset=doc["onnx_opset"],
            inputs=io(doc["inputs"]),
            outputs=io(doc["outputs"]),
            profiles=tuple(
                EngineProfile(
                    p["index"],
                    p["name"],
                    {
                        n: (tuple(r["min"]), tuple(r["opt"]), tuple(r["max"]))
                        for n, r in p["shapes"].items()
                    },
                )
                for p in doc["profiles"]
            ),
            weights_bytes=doc["weights_bytes"],
            activation_bytes=tuple(doc["activation_bytes"]),
            engine_bytes=doc["engine_bytes"],
            engine_sha256=doc["engine_sha256"],
            source=doc.get("source", "builder"),
        )


LLM_SECTION_VERSION = 1
# Version 2 adds the window input (`inputs.window`, `window_bucket`); a bundle without one
# stays version 1, so runners that do not feed a window still read every bundle they can run.
LLM_SECTION_WINDOW_VERSION = 2
# Version 3 (`runtime.slots` > 1) adds the slot input (`inputs.slot`) and `slots`.
LLM_SECTION_SLOTS_VERSION = 3
LLM_SECTION_VERSIONS = (LLM_SECTION_VERSION, LLM_SECTION_WINDOW_VERSION, LLM_SECTION_SLOTS_VERSION)


@dataclass(frozen=True)
class LlmSection:
    """`bundle.json` `llm`: how to generate with a causal LM built by the Hugging Face recipe.

    The method (`method`) takes `tokens_input` `[1, seq]` and `positions_input` `[seq]`
    (the cache slots those tokens are written to: one conversation uses
    0, 1, 2, … and may restart at 0) and returns `logits_output` `[1, vocab_size]`
    for the last position. The KV cache lives inside the program as mutable buffers
    (`cache_buffers`), kept across executions while the method stays loaded.

    Contract for every runner:
    - refuse, before executing, any position outside `[0, max_cache_len)` (a call at
      `start` with `seq` tokens needs `start >= 0` and `start + seq <= max_cache_len`);
      the runtime would otherwise fail inside `index_put` with an opaque error;
    - `requires_zeroed_planned_memory`: the cache has no initial contents in the
      `.pte`; it must start zeroed (`executorch::extension::Module` zero-fills the
      planned memory it allocates; a runner supplying its own must zero it);
    - text: `ids = tokenizer.encode(text)` with special tokens, then `[bos_token_id] +
      ids` when `prepend_bos` (`adds_bos` says the tokenizer itself already puts bos
      first); stop when a generated id is in `eos_token_ids`;
    - chat: `chat_template` (the model's Jinja template, null when it has none) rendered as
      transformers' `apply_chat_template` renders it, with `special_tokens` (`bos_token`,
      `eos_token`, `pad_token`, … as strings) as template variables, then encoded without
      special tokens (`trt_edge_runner.text`). Both are absent (None) in bundles built
      before they were recorded: such a bundle has no chat template.
    - window (version 2, `window_input` set; built with `attention: filled`): every call
      also feeds `window_input`, an int64 tensor `[W]` whose *length* is how many cache
      slots attention reads — `W = window_length(start + seq)`, the slots written so far
      rounded up to a multiple of `window_bucket`, at most `max_cache_len` (contents:
      `0..W-1`; the program reads only the length). A shorter window than `start + seq`
      is refused before executing: the new positions would not see themselves.
    - slots (version 3, `slot_input` set; built with `runtime.slots` N > 1): the program
      holds N KV caches. Tokens are `[batch, seq]`, positions `[batch, seq]` (each row its
      own), `slot_input` `[batch]` the cache each row reads and writes, and the logits
      `[batch, vocab]`. Refuse before executing a slot outside `[0, slots)` or named twice
      in one call. One conversation alone is batch 1 (`[[ids]]`, `[[positions]]`, `[slot]`).
    """

    version: int
    method: str
    max_cache_len: int
    vocab_size: int
    tokens_input: str
    positions_input: str
    logits_output: str
    eos_token_ids: tuple[int, ...]
    bos_token_id: int | None
    pad_token_id: int | None
    tokenizer: str | None  # a file of the bundle (HF tokenizers JSON), or None
    adds_bos: bool
    prepend_bos: bool
    requires_zeroed_planned_memory: bool
    cache_buffers: tuple[str, ...]
    architecture: str
    chat_template: str | None = None
    # None: a bundle from before the chat fields (then neither is written back)
    special_tokens: dict[str, str] | None = None
    window_input: str | None = None  # version 2: the attended window's input
    window_bucket: int | None = None  # version 2: window lengths are multiples of this
    slot_input: str | None = None  # version 3: the input naming each row's KV cache
    slots: int = 1  # version 3: how many KV caches the program holds

    def window_length(self, end: int) -> int:
        """The window a call writing positions up to `end - 1` feeds: `end` rounded up to
        the bucket, capped at the cache. Buckets limit how often the delegates re-plan for
        a new shape (once per `window_bucket` decoded tokens)."""
        bucket = self.window_bucket or 1
        return max(1, min(self.max_cache_len, -(-end // bucket) * bucket))

    def to_dict(self) -> dict[str, Any]:
        roles = {"tokens": self.tokens_input, "positions": self.positions_input}
        window: dict[str, Any] = {}
        if self.window_input is not None:
            roles["window"] = self.window_input
            window["window_bucket"] = self.window_bucket
        if self.slot_input is not None:
            roles["slot"] = self.slot_input
            window["slots"] = self.slots
        doc: dict[str, Any] = {
            "version": self.version,
            "method": self.method,
            "max_cache_len": self.max_cache_len,
            "vocab_size": self.vocab_size,
            "inputs": roles,
            **window,
            "logits": self.logits_output,
            "eos_token_ids": list(self.eos_token_ids),
            "bos_token_id": self.bos_token_id,
            "pad_token_id": self.pad_token_id,
            "tokenizer": self.tokenizer,
            "adds_bos": self.adds_bos,
            "prepend_bos": self.prepend_bos,
            "requires_zeroed_planned_memory": self.requires_zeroed_planned_memory,
            "cache_buffers": list(self.cache_buffers),
            "architecture": self.architecture,
        }
        if self.special_tokens is not None:
            doc["chat_template"] = self.chat_template
            doc["special_tokens"] = dict(self.special_tokens)
        return doc


MEMORY_KEYS = ("weights_bytes", "planned_bytes", "kv_cache_bytes", "runner_bytes", "total_bytes")


@dataclass(frozen=True)
class MemorySection:
    """`bundle.json` `memory`: what the bundle needs at run time, in bytes.

    Written by the build (`trt_edge.memory`), read by the device agent's install check
    and by `inspect`/`info`. `planned_bytes` are the program's memory-planned buffers
    (activations and, for a causal LM, the KV cache: `kv_cache_bytes` is the part of
    `planned_bytes` the cache takes, not an addition); `total_bytes` is weights +
    planned + the runner's own. Optional: bundles built before it have none.
    """

    weights_bytes: int
    planned_bytes: int
    kv_cache_bytes: int
    runner_bytes: int
    total_bytes: int

    def to_dict(self) -> dict[str, int]:
        return {key: getattr(self, key) for key in MEMORY_KEYS}


GENERATION_SECTION_VERSION = 1
TINY_LLM = "tiny_llm"


@dataclass(frozen=True)
class GenerationSection:
    """`bundle.json` `generation`: a generation contract whose caches cross the call boundary.

    `tiny_llm` (the manifest's `runtime.generation: tiny_llm`): the method takes `tokens`
    `[1, seq]`, `start_position` `[1]` (the position of the first token) and every other
    input is a cache, in the order of the outputs after `logits`: each call feeds back the
    caches the previous call returned. `logits` is `[1, seq, vocab]` (or `[1, vocab]`): the
    next token is the argmax of the last row. Readers take the names from here, never from
    what an example happened to call its inputs.
    """

    version: int
    contract: str
    tokens: str
    start_position: str
    logits: str

    def caches(self, inputs: tuple[TensorSpec, ...]) -> tuple[str, ...]:
        """The cache inputs: every input other than the tokens and the start position."""
        return tuple(s.name for s in inputs if s.name not in (self.tokens, self.start_position))

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "contract": self.contract,
            "tokens": self.tokens,
            "start_position": self.start_position,
            "logits": self.logits,
        }


@dataclass(frozen=True)
class BundleManifest:
    schema_version: int
    name: str
    version: str
    backend: str
    target: dict[str, Any]
    method: str
    inputs: tuple[TensorSpec, ...]
    outputs: tuple[TensorSpec, ...]
    profiles: tuple[Profile, ...]
    runtime: RuntimePolicy
    files: dict[str, FileEntry]
    delegates: tuple[DelegateInfo, ...] = ()
    provenance: dict[str, Any] = field(default_factory=dict)
    llm: LlmSection | None = None  # only for causal LMs built by the Hugging Face recipe
    memory: MemorySection | None = None  # what it needs at run time (absent in older bundles)
    generation: GenerationSection | None = None  # a declared contract (runtime.generation)
    # Only for bundles whose weights the build quantized (`build.quantize`, or a TensorRT
    # precision other than fp32): {"scheme", "linear", "group_size", "embedding", "backend", ...}.
    quantization: dict[str, Any] | None = None

    # ---- derived views -------------------------------------------------
    def symbols(self) -> dict[str, tuple[int, int]]:
        """The export domain: per symbol, (min of mins, max of maxes) over all profiles."""
        domain: dict[str, tuple[int, int]] = {}
        for profile in self.profiles:
            for sym, r in profile.dims.items():
                lo, hi = domain.get(sym, (r.min, r.max))
                domain[sym] = (min(lo, r.min), max(hi, r.max))
        return domain

    # ---- (de)serialisation ---------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        doc = self._core_dict()
        if self.llm is not None:  # absent otherwise: other bundles' bytes stay as they were
            doc["llm"] = self.llm.to_dict()
        if self.memory is not None:  # likewise absent in bundles built without it
            doc["memory"] = self.memory.to_dict()
        if self.generation is not None:
            doc["generation"] = self.generation.to_dict()
        if self.quantization is not None:  # likewise absent for unquantized bundles
            doc["quantization"] = dict(self.quantization)
        return doc

    def _core_dict(self) -> dict[str, Any]:
        def tensor(t: TensorSpec) -> dict[str, Any]:
            return {
                "name": t.name,
                "dtype": t.dtype,
                "shape": list(t.shape),
                "values": list(t.values) if t.values is not None else None,
            }

        return {
            "schema_version": self.schema_version,
            "model": {"name": self.name, "version": self.version},
            "backend": self.backend,
            "target": self.target,
            "io": {
                "method": self.method,
                "inputs": [tensor(t) for t in self.inputs],
                "outputs": [tensor(t) for t in self.outputs],
            },
            "profiles": [
                {
                    "index": i,
                    "name": p.name,
                    "dims": {
                        s: {"min": r.min, "opt": r.opt, "max": r.max} for s, r in p.dims.items()
                    },
                    "bounds": [
                        {"input": spec.name, "min": list(lo), "max": list(hi)}
                        for spec, (lo, hi) in zip(self.inputs, p.bounds(self.inputs), strict=True)
                    ],
                }
                for i, p in enumerate(self.profiles)
            ],
            "runtime": {"policy": self.runtime.policy, "phases": dict(self.runtime.phases)},
            "files": {k: {"sha256": v.sha256, "size": v.size} for k, v in self.files.items()},
            "delegates": [d.to_dict() for d in self.delegates],
            "provenance": self.provenance,
        }

    def to_canonical_json(self) -> bytes:
        """The exact bytes written to disk and signed: sorted keys, no spaces, UTF-8, newline."""
        return canonical_json(self.to_dict())

    @classmethod
    def from_json(cls, data: bytes | str, source: str = BUNDLE_JSON) -> BundleManifest:
        return cls.from_dict(parse_json_object(data, source, "", BundleFormatError), source)

    @classmethod
    def from_dict(cls, doc: Any, source: str = BUNDLE_JSON) -> BundleManifest:
        reader = _Reader(source)
        return reader.manifest(doc)


def _spoken(versions: tuple[int, ...]) -> str:
    """`1, 2 or 3`: the versions a reader knows, as a sentence says them."""
    words = [str(v) for v in versions]
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} or {words[-1]}"


def file_sha256(path: Path) -> str:
    """Hex sha256 of a file, read in 1 MiB blocks: the digest `files` entries record."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def canonical_json(doc: Any) -> bytes:
    return (
        json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n"
    ).encode("utf-8")


class _Reader:
    """Reads a parsed `bundle.json`, raising `BundleFormatError` naming the JSON path at fault.

    `manifest` holds the document to `bundle.schema.json` (`schemas.check`) right after it
    reads `schema_version`, and every other method is called only from there, after that
    check: a field's presence, type, enum and bounds are the schema's to refuse (the same
    contract the C++ reader is held to), so the methods below read fields directly and
    check only what a schema cannot say.
    """

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, path: str, message: str) -> BundleFormatError:
        return BundleFormatError(f"{self.source}: {path}: {message}")

    def get(self, obj: Any, key: str, path: str, kind: type) -> Any:
        """`obj[key]` of type `kind`, for what the schema cannot require: `schema_version`
        (read before the schema, to refuse another version as such) and llm version 2's
        window fields (optional in the schema, which has no per-version rules)."""
        where = f"{path}.{key}".lstrip(".")
        if not isinstance(obj, dict):
            raise self.fail(path, "expected an object")
        if key not in obj:
            raise self.fail(where, "missing")
        value = obj[key]
        if isinstance(value, bool) and kind is int:
            raise self.fail(where, "expected an integer, got a boolean")
        if not isinstance(value, kind):
            raise self.fail(where, f"expected {kind.__name__}, got {value!r}")
        return value

    @staticmethod
    def tensor(obj: dict[str, Any]) -> TensorSpec:
        values = obj.get("values")
        return TensorSpec(
            name=obj["name"],
            dtype=obj["dtype"],
            shape=tuple(obj["shape"]),
            values=None if values is None else (values[0], values[1]),
        )

    def manifest(self, doc: Any) -> BundleManifest:
        version = self.get(doc, "schema_version", "", int)
        if version != SCHEMA_VERSION:
            raise self.fail(
                "schema_version",
                f"this runner reads schema version {SCHEMA_VERSION}, the bundle has {version}; "
                "rebuild the bundle with a matching trt-edge or update the runner",
            )
        problem = check("bundle", doc)
        if problem is not None:
            raise self.fail(*problem)
        io = doc["io"]
        inputs = tuple(self.tensor(t) for t in io["inputs"])
        outputs = tuple(self.tensor(t) for t in io["outputs"])
        profiles = tuple(
            self.profile(p, f"profiles[{i}]", inputs) for i, p in enumerate(doc["profiles"])
        )
        files = {
            name: FileEntry(sha256=entry["sha256"], size=entry["size"])
            for name, entry in doc["files"].items()
        }
        delegates = tuple(
            DelegateInfo(
                backend_id=d["backend_id"],
                method=d["method"],
                index=d["index"],
                blob_size=d["blob_size"],
                profile_signature=d.get("profile_signature"),
                engine=EngineRecord.from_dict(d["engine"]) if d.get("engine") else None,
            )
            for d in doc.get("delegates", [])
        )
        llm, memory, generation = doc.get("llm"), doc.get("memory"), doc.get("generation")
        return BundleManifest(
            schema_version=version,
            name=doc["model"]["name"],
            version=doc["model"]["version"],
            backend=doc["backend"],
            target=doc["target"],
            method=io["method"],
            inputs=inputs,
            outputs=outputs,
            profiles=profiles,
            runtime=RuntimePolicy(
                policy=doc["runtime"]["policy"], phases=dict(doc["runtime"]["phases"])
            ),
            files=files,
            delegates=delegates,
            provenance=doc.get("provenance", {}),
            llm=None if llm is None else self.llm(llm, inputs, outputs, files),
            memory=None if memory is None else MemorySection(**{k: memory[k] for k in MEMORY_KEYS}),
            generation=None if generation is None else self.generation(generation, inputs, outputs),
            quantization=doc.get("quantization"),
        )

    def profile(self, doc: dict[str, Any], path: str, inputs: tuple[TensorSpec, ...]) -> Profile:
        """One profile; every symbol an input's shape names must have its range here."""
        dims = {sym: DimRange(r["min"], r["opt"], r["max"]) for sym, r in doc["dims"].items()}
        for spec in inputs:
            for d in spec.shape:
                if isinstance(d, str) and d not in dims:
                    raise self.fail(f"{path}.dims", f"symbol {d!r} of input {spec.name!r} missing")
        return Profile(name=doc["name"], dims=dims)

    def generation(
        self,
        section: dict[str, Any],
        inputs: tuple[TensorSpec, ...],
        outputs: tuple[TensorSpec, ...],
    ) -> GenerationSection:
        """The `generation` section (its structure already checked by the schema)."""
        if section["version"] != GENERATION_SECTION_VERSION:
            raise self.fail(
                "generation.version",
                f"this runner reads generation section version {GENERATION_SECTION_VERSION}, "
                f"the bundle has {section['version']}; update the runner or rebuild the bundle "
                "with a matching trt-edge",
            )
        names = [s.name for s in inputs]
        for role in ("tokens", "start_position"):
            if section[role] not in names:
                raise self.fail(
                    f"generation.{role}", f"{section[role]!r} is not an input ({names})"
                )
        if section["logits"] not in [s.name for s in outputs]:
            raise self.fail("generation.logits", f"{section['logits']!r} is not an output")
        return GenerationSection(
            version=section["version"],
            contract=section["contract"],
            tokens=section["tokens"],
            start_position=section["start_position"],
            logits=section["logits"],
        )

    def llm(
        self,
        section: dict[str, Any],
        inputs: tuple[TensorSpec, ...],
        outputs: tuple[TensorSpec, ...],
        files: dict[str, FileEntry],
    ) -> LlmSection:
        """The `llm` section: its version, version 2's window fields, the roles' names among
        the inputs and outputs, the tokenizer among the files (the rest is the schema's)."""
        version = section["version"]
        if version not in LLM_SECTION_VERSIONS:
            raise self.fail(
                "llm.version",
                "this runner reads llm section version "
                f"{_spoken(LLM_SECTION_VERSIONS)}, the bundle has {version}; "
                "update the runner or rebuild the bundle with a matching trt-edge",
            )
        roles = section["inputs"]
        window: str | None = None
        bucket: int | None = None
        named = [("tokens", roles["tokens"]), ("positions", roles["positions"])]
        if version == LLM_SECTION_WINDOW_VERSION:
            window = self.get(roles, "window", "llm.inputs", str)
            named.append(("window", window))
            bucket = self.get(section, "window_bucket", "llm", int)  # >= 1: the schema's
        slot: str | None = None
        slots = 1
        if version == LLM_SECTION_SLOTS_VERSION:
            slot = self.get(roles, "slot", "llm.inputs", str)
            named.append(("slot", slot))
            slots = self.get(section, "slots", "llm", int)  # >= 2: the schema's
        names = [spec.name for spec in inputs]
        for role, name in named:
            if name not in names:
                raise self.fail(f"llm.inputs.{role}", f"{name!r} is not an input ({names})")
        if section["logits"] not in [spec.name for spec in outputs]:
            raise self.fail("llm.logits", f"{section['logits']!r} is not an output")
        tokenizer = section.get("tokenizer")
        if tokenizer is not None and tokenizer not in files:
            raise self.fail("llm.tokenizer", f"{tokenizer!r} is not listed in files")
        special_tokens = section.get("special_tokens")
        return LlmSection(
            version=version,
            method=section["method"],
            max_cache_len=section["max_cache_len"],
            vocab_size=section["vocab_size"],
            tokens_input=roles["tokens"],
            positions_input=roles["positions"],
            logits_output=section["logits"],
            eos_token_ids=tuple(section["eos_token_ids"]),
            bos_token_id=section.get("bos_token_id"),
            pad_token_id=section.get("pad_token_id"),
            tokenizer=tokenizer,
            adds_bos=section["adds_bos"],
            prepend_bos=section["prepend_bos"],
            requires_zeroed_planned_memory=section["requires_zeroed_planned_memory"],
            cache_buffers=tuple(section["cache_buffers"]),
            architecture=section["architecture"],
            chat_template=section.get("chat_template"),
            # Both chat fields are absent in bundles built before they were recorded.
            special_tokens=dict(special_tokens)
            if special_tokens is not None
            else ({} if "chat_template" in section else None),
            window_input=window,
            window_bucket=bucket,
            slot_input=slot,
            slots=slots,
        )
