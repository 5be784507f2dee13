"""Torch-TensorRT's ExecuTorch delegate blob (`TR01`, `TR02`): read, check and write.

The TensorRT ExecuTorch backend stores each engine as one self-contained blob
(upstream `torch_tensorrt/executorch/serialization.py`)::

    offset 0   header, struct "<4sIIIQ8s" (32 bytes, little-endian):
               magic      b"TR01", or b"TR02" when the metadata has aliased I/O
               u32        metadata offset (upstream: 32, right after the header)
               u32        metadata size
               u32        engine offset (16-byte aligned)
               u64        engine size
               8 bytes    reserved (upstream writes 01 00 00 00 00 00 00 00)
    metadata   compact UTF-8 JSON: io_bindings [{name, dtype, shape, is_input}],
               aliased_io [{output, input, kind}], hardware_compatible, device_id,
               serialized_metadata (base64 of pickled settings), target_platform
    padding    zeros up to the engine offset
    engine     the serialized TensorRT engine

`TR02` exists so a parser that predates aliasing rejects aliased blobs instead of
binding aliased outputs to fresh buffers (wrong results, no error); a `TR01` blob that
carries aliases is therefore refused here too.

`parse_trt_blob` checks everything upstream's deserializer checks and more (engine
inside the header, metadata/engine overlap in either order, JSON types), always raising
`TrtBlobError` — never `struct.error`, `KeyError` or `json.JSONDecodeError`. It never
copies the engine: `TrtBlob.engine_range` says where it is. `serialized_metadata` is
reported by presence and size only; it is a pickle and is never unpickled here.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass, field
from typing import Any

from trt_edge.inspect.errors import TrtBlobError

MAGIC_TR01 = b"TR01"
MAGIC_TR02 = b"TR02"
MAGICS = (MAGIC_TR01, MAGIC_TR02)
HEADER = struct.Struct("<4sIIIQ8s")
HEADER_SIZE = HEADER.size
ENGINE_ALIGNMENT = 16
UPSTREAM_RESERVED = b"\x01" + b"\x00" * 7
TENSORRT_BACKEND_ID = "TensorRTBackend"
ALIAS_KINDS = ("kv_cache_update", "user")


def is_tensorrt_backend(backend_id: str) -> bool:
    """Torch-TensorRT registers its ExecuTorch backend as `TensorRTBackend`."""
    return backend_id == TENSORRT_BACKEND_ID


@dataclass(frozen=True)
class IOBinding:
    name: str
    dtype: str = ""
    shape: tuple[int, ...] = ()
    is_input: bool = True

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "dtype": self.dtype,
            "shape": list(self.shape),
            "is_input": self.is_input,
        }


@dataclass(frozen=True)
class AliasedIO:
    """Engine output `output` writes in place into input `input` (e.g. a KV cache)."""

    output: str
    input: str
    kind: str = "kv_cache_update"

    def to_dict(self) -> dict[str, Any]:
        return {"output": self.output, "input": self.input, "kind": self.kind}


@dataclass(frozen=True)
class TrtBlobMetadata:
    io_bindings: tuple[IOBinding, ...] = ()
    aliased_io: tuple[AliasedIO, ...] = ()
    hardware_compatible: bool = False
    device_id: int = 0
    serialized_metadata: str = ""
    target_platform: str = ""

    def to_json(self) -> bytes:
        """Compact JSON in upstream's key order (its C++ parser scans forward for scalars
        after the two arrays, so the order is part of the format)."""
        doc = {
            "io_bindings": [b.to_dict() for b in self.io_bindings],
            "aliased_io": [a.to_dict() for a in self.aliased_io],
            "hardware_compatible": self.hardware_compatible,
            "device_id": self.device_id,
            "serialized_metadata": self.serialized_metadata,
            "target_platform": self.target_platform,
        }
        return json.dumps(doc, separators=(",", ":")).encode("utf-8")

    def to_dict(self) -> dict[str, Any]:
        return {
            "io_bindings": [b.to_dict() for b in self.io_bindings],
            "aliased_io": [a.to_dict() for a in self.aliased_io],
            "hardware_compatible": self.hardware_compatible,
            "device_id": self.device_id,
            "target_platform": self.target_platform,
            "serialized_metadata_present": bool(self.serialized_metadata),
            "serialized_metadata_size": len(self.serialized_metadata),
        }


@dataclass(frozen=True)
class TrtBlob:
    """A parsed blob: header fields, metadata, where the engine is. Holds no engine bytes."""

    magic: str
    metadata_offset: int
    metadata_size: int
    engine_offset: int
    engine_size: int
    reserved: bytes
    blob_size: int
    metadata: TrtBlobMetadata
    unknown_metadata_keys: tuple[str, ...] = field(default=())

    @property
    def engine_range(self) -> tuple[int, int]:
        return self.engine_offset, self.engine_offset + self.engine_size

    @property
    def trailing_bytes(self) -> int:
        return self.blob_size - self.engine_offset - self.engine_size

    def to_dict(self) -> dict[str, Any]:
        return {
            "magic": self.magic,
            "metadata_offset": self.metadata_offset,
            "metadata_size": self.metadata_size,
            "engine_offset": self.engine_offset,
            "engine_size": self.engine_size,
            "engine_alignment": ENGINE_ALIGNMENT,
            "reserved": self.reserved.hex(),
            "blob_size": self.blob_size,
            "trailing_bytes": self.trailing_bytes,
            "metadata": self.metadata.to_dict(),
            "unknown_metadata_keys": list(self.unknown_metadata_keys),
        }


def _fail(source: str, message: str) -> TrtBlobError:
    return TrtBlobError(
        f"{source}: not a valid Torch-TensorRT ExecuTorch blob: {message}; rebuild the "
        "engine with a torch_tensorrt that writes TR01/TR02 blobs (`trt-edge build`)"
    )


def _typed(doc: dict[str, Any], key: str, kind: type, default: Any, source: str) -> Any:
    value = doc.get(key, default)
    if kind is int and isinstance(value, bool):
        raise _fail(source, f"metadata '{key}' must be an integer, got {value!r}")
    if not isinstance(value, kind):
        raise _fail(source, f"metadata '{key}' must be {kind.__name__}, got {value!r}")
    return value


def _metadata(raw: bytes, source: str) -> tuple[TrtBlobMetadata, tuple[str, ...]]:
    try:
        doc = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise _fail(source, f"metadata is not UTF-8 (byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise _fail(source, f"metadata is not JSON ({exc.msg} at char {exc.pos})") from None
    if not isinstance(doc, dict):
        raise _fail(source, f"metadata must be a JSON object, got {type(doc).__name__}")
    bindings: list[IOBinding] = []
    for i, b in enumerate(_typed(doc, "io_bindings", list, [], source)):
        where = f"io_bindings[{i}]"
        if not isinstance(b, dict) or not isinstance(b.get("name"), str):
            raise _fail(source, f"metadata {where} must be an object with a string 'name'")
        shape = b.get("shape", [])
        if not isinstance(shape, list) or not all(
            isinstance(d, int) and not isinstance(d, bool) for d in shape
        ):
            raise _fail(source, f"metadata {where}.shape must be a list of integers")
        dtype, is_input = b.get("dtype", ""), b.get("is_input", True)
        if not isinstance(dtype, str) or not isinstance(is_input, bool):
            raise _fail(source, f"metadata {where} has a non-string dtype or non-bool is_input")
        bindings.append(IOBinding(b["name"], dtype, tuple(shape), is_input))
    aliases: list[AliasedIO] = []
    for i, a in enumerate(_typed(doc, "aliased_io", list, [], source)):
        if not (
            isinstance(a, dict)
            and isinstance(a.get("output"), str)
            and isinstance(a.get("input"), str)
            and isinstance(a.get("kind", "kv_cache_update"), str)
        ):
            raise _fail(
                source, f"metadata aliased_io[{i}] must be an object with string output/input"
            )
        aliases.append(AliasedIO(a["output"], a["input"], a.get("kind", "kv_cache_update")))
    known = {
        "io_bindings",
        "aliased_io",
        "hardware_compatible",
        "device_id",
        "serialized_metadata",
        "target_platform",
    }
    meta = TrtBlobMetadata(
        io_bindings=tuple(bindings),
        aliased_io=tuple(aliases),
        hardware_compatible=_typed(doc, "hardware_compatible", bool, False, source),
        device_id=_typed(doc, "device_id", int, 0, source),
        serialized_metadata=_typed(doc, "serialized_metadata", str, "", source),
        target_platform=_typed(doc, "target_platform", str, "", source),
    )
    return meta, tuple(sorted(k for k in doc if k not in known))


def _check_region(source: str, what: str, offset: int, length: int, size: int) -> None:
    """The header's `what` region [offset, offset + length) lies after the header and inside
    the `size`-byte blob."""
    if offset < HEADER_SIZE:
        raise _fail(source, f"{what} offset {offset} is inside the {HEADER_SIZE}-byte header")
    if offset + length > size:
        raise _fail(
            source,
            f"{what} [{offset}, {offset + length}) extends past the end of the blob ({size} bytes)",
        )


def parse_trt_blob(data: bytes | bytearray | memoryview, *, source: str = "blob") -> TrtBlob:
    """Parse and check a TR01/TR02 blob; `source` names it in errors (file + delegate)."""
    size = len(data)
    if size < HEADER_SIZE:
        raise _fail(source, f"{size} bytes is shorter than the {HEADER_SIZE}-byte header")
    magic, meta_off, meta_size, eng_off, eng_size, reserved = HEADER.unpack_from(data, 0)
    if magic not in MAGICS:
        raise _fail(source, f"magic is {bytes(magic)!r}, expected b'TR01' or b'TR02'")
    _check_region(source, "metadata", meta_off, meta_size, size)
    if eng_off % ENGINE_ALIGNMENT:
        raise _fail(source, f"engine offset {eng_off} is not {ENGINE_ALIGNMENT}-byte aligned")
    _check_region(source, "engine", eng_off, eng_size, size)
    if meta_off < eng_off + eng_size and eng_off < meta_off + meta_size:
        raise _fail(
            source,
            f"metadata [{meta_off}, {meta_off + meta_size}) overlaps engine "
            f"[{eng_off}, {eng_off + eng_size})",
        )
    metadata, unknown = _metadata(bytes(data[meta_off : meta_off + meta_size]), source)
    if magic == MAGIC_TR01 and metadata.aliased_io:
        raise _fail(
            source,
            "magic TR01 but the metadata has aliased_io; aliased blobs must be TR02 so runtimes "
            "without aliasing support refuse them",
        )
    return TrtBlob(
        magic=magic.decode("ascii"),
        metadata_offset=meta_off,
        metadata_size=meta_size,
        engine_offset=eng_off,
        engine_size=eng_size,
        reserved=bytes(reserved),
        blob_size=size,
        metadata=metadata,
        unknown_metadata_keys=unknown,
    )


def engine_view(data: bytes | bytearray | memoryview, blob: TrtBlob) -> memoryview:
    """Zero-copy view of the engine bytes of a parsed blob."""
    start, end = blob.engine_range
    return memoryview(data)[start:end]


def write_trt_blob(engine: bytes | memoryview, metadata: TrtBlobMetadata) -> bytes:
    """Write a blob byte-for-byte as upstream's `serialize_engine` does.

    For tests and tooling around the format; `engine` must be a real serialized engine
    for the result to be a runnable delegate.
    """
    meta = metadata.to_json()
    meta_off = HEADER_SIZE
    eng_off = (meta_off + len(meta) + ENGINE_ALIGNMENT - 1) // ENGINE_ALIGNMENT * ENGINE_ALIGNMENT
    header = HEADER.pack(
        MAGIC_TR02 if metadata.aliased_io else MAGIC_TR01,
        meta_off,
        len(meta),
        eng_off,
        len(engine),
        UPSTREAM_RESERVED,
    )
    return header + meta + b"\x00" * (eng_off - meta_off - len(meta)) + bytes(engine)
