"""An upstream-equivalent writer of Torch-TensorRT's ExecuTorch delegate blob, for test data.

torch_tensorrt cannot be installed here (no TensorRT), so this module re-creates the
behaviour of `torch_tensorrt/executorch/serialization.py::serialize_engine` (pytorch/
TensorRT, the multi-profile line) independently of `trt_edge.inspect.trt_blob`, so the
reader is tested against a second implementation of the wire format, not against itself:

* header `struct "<4sIIIQ8s"`: magic, metadata offset (= header size, 32), metadata
  size, engine offset (metadata end rounded up to 16), engine size, reserved
  (`b"\\x01"` + 7 zero bytes, as upstream writes it);
* magic `TR02` when the metadata has aliased I/O, else `TR01`;
* metadata: compact JSON (`separators=(",", ":")`) with keys in upstream's order:
  io_bindings, aliased_io (list of {output, input, kind}), hardware_compatible,
  device_id, serialized_metadata, target_platform;
* zero padding, then the engine bytes.

test_trt_blob_upstream.py checks this format against the real upstream module when it
is provided (it matched the torch-tensorrt 2.14.0 wheel byte for byte).

The engine bytes passed in by tests are PLACEHOLDERS (`placeholder_engine`): they are
not TensorRT engines and nothing here pretends they are.
"""

from __future__ import annotations

import json
import struct
from typing import Any

UPSTREAM_HEADER_FORMAT = "<4sIIIQ8s"
UPSTREAM_HEADER_SIZE = struct.calcsize(UPSTREAM_HEADER_FORMAT)


def placeholder_engine(size: int, seed: int = 0) -> bytes:
    """Deterministic placeholder bytes standing in for a serialized engine (NOT an engine)."""
    label = b"PLACEHOLDER-NOT-A-TENSORRT-ENGINE:"
    body = bytes((seed + i * 31) % 251 for i in range(max(size - len(label), 0)))
    return (label + body)[:size]


def upstream_metadata_json(
    io_bindings: list[dict[str, Any]],
    aliased_io: dict[str, tuple[str, str]] | None = None,
    hardware_compatible: bool = False,
    device_id: int = 0,
    serialized_metadata: str = "",
    target_platform: str = "",
) -> bytes:
    doc = {
        "io_bindings": [
            {
                "name": b["name"],
                "dtype": b.get("dtype", ""),
                "shape": list(b.get("shape", [])),
                "is_input": b.get("is_input", True),
            }
            for b in io_bindings
        ],
        "aliased_io": [
            {"output": out, "input": inp, "kind": kind}
            for out, (inp, kind) in (aliased_io or {}).items()
        ],
        "hardware_compatible": hardware_compatible,
        "device_id": device_id,
        "serialized_metadata": serialized_metadata,
        "target_platform": target_platform,
    }
    return json.dumps(doc, separators=(",", ":")).encode("utf-8")


def upstream_serialize_engine(engine: bytes, metadata_json: bytes, aliased: bool) -> bytes:
    metadata_offset = UPSTREAM_HEADER_SIZE
    engine_offset = (metadata_offset + len(metadata_json) + 15) & ~15
    header = struct.pack(
        UPSTREAM_HEADER_FORMAT,
        b"TR02" if aliased else b"TR01",
        metadata_offset,
        len(metadata_json),
        engine_offset,
        len(engine),
        b"\x01" + b"\x00" * 7,
    )
    pad = b"\x00" * (engine_offset - metadata_offset - len(metadata_json))
    return header + metadata_json + pad + engine


def sample_blob(engine_size: int = 100, *, aliased: bool = False, seed: int = 0) -> bytes:
    """A TR01 (or TR02) blob shaped like a prefill/decode LLM engine's, around placeholder bytes."""
    bindings = [
        {"name": "input_ids", "dtype": "int64", "shape": [1, -1], "is_input": True},
        {"name": "logits", "dtype": "float32", "shape": [1, -1, 64], "is_input": False},
    ]
    alias = None
    if aliased:
        bindings.append({"name": "kv_in", "dtype": "float16", "shape": [1, 8, -1, 16]})
        bindings.append(
            {"name": "kv_out", "dtype": "float16", "shape": [1, 8, -1, 16], "is_input": False}
        )
        alias = {"kv_out": ("kv_in", "kv_cache_update")}
    meta = upstream_metadata_json(
        bindings,
        alias,
        hardware_compatible=True,
        device_id=0,
        serialized_metadata="c2V0dGluZ3M=",
        target_platform="linux_aarch64",
    )
    return upstream_serialize_engine(placeholder_engine(engine_size, seed), meta, aliased)
