"""Tensors as the engine carries them (raw little-endian bytes) ↔ KServe v2 datatypes and lists.

No numpy on a device: `struct` packs and unpacks flat lists. The KServe datatype names
(`FP32`, `INT64`, `BOOL`, …) map one to one onto the bundle's dtype names
(`trt_edge_runner.dtypes`); bfloat16 has no KServe name (`BF16` is Triton's, used here).
"""

from __future__ import annotations

import math
import struct
from collections.abc import Sequence

from trt_edge_runner.dtypes import BY_NAME
from trt_edge_runner.errors import EXIT_BAD_INPUT, TrtEdgeError

KSERVE_BY_DTYPE = {
    "float32": "FP32",
    "float16": "FP16",
    "bfloat16": "BF16",
    "float64": "FP64",
    "int64": "INT64",
    "int32": "INT32",
    "int16": "INT16",
    "int8": "INT8",
    "uint8": "UINT8",
    "bool": "BOOL",
}
DTYPE_BY_KSERVE = {v: k for k, v in KSERVE_BY_DTYPE.items()}
_STRUCT = {
    "float32": "f",
    "float16": "e",
    "float64": "d",
    "int64": "q",
    "int32": "i",
    "int16": "h",
    "int8": "b",
    "uint8": "B",
    "bool": "?",
}


class TensorDataError(TrtEdgeError, ValueError):
    """Data that does not match its declared datatype or shape (the message says how)."""

    exit_code = EXIT_BAD_INPUT


def element_count(shape: Sequence[int]) -> int:
    return math.prod(shape)


def byte_size(dtype: str, shape: Sequence[int]) -> int:
    return BY_NAME[dtype].itemsize * element_count(shape)


def pack(dtype: str, shape: Sequence[int], values: Sequence[object]) -> bytes:
    """A flat (or nested) list of values as the engine's raw bytes."""
    flat = _flatten(values)
    count = element_count(shape)
    if len(flat) != count:
        raise TensorDataError(f"holds {len(flat)} values, shape {list(shape)} needs {count}")
    if dtype == "bfloat16":
        packed = struct.pack(f"<{count}f", *flat)
        return b"".join(packed[i + 2 : i + 4] for i in range(0, len(packed), 4))
    code = _STRUCT[dtype]
    try:
        return struct.pack(f"<{count}{code}", *flat)
    except struct.error as exc:
        raise TensorDataError(f"values do not fit {dtype}: {exc}") from None


def unpack(dtype: str, data: bytes) -> list[object]:
    """The engine's raw bytes as a flat list of Python numbers (or bools)."""
    if dtype == "bfloat16":
        widened = b"".join(b"\0\0" + data[i : i + 2] for i in range(0, len(data), 2))
        return list(struct.unpack(f"<{len(data) // 2}f", widened))
    code = _STRUCT[dtype]
    size = struct.calcsize(code)
    if len(data) % size:
        raise TensorDataError(f"{len(data)} bytes is not a whole number of {dtype} values")
    return list(struct.unpack(f"<{len(data) // size}{code}", data))


def filled(dtype: str, shape: Sequence[int], value: int = 0) -> bytes:
    """A tensor of `shape` with every element `value` (smoke runs)."""
    if value == 0:
        return bytes(byte_size(dtype, shape))
    return pack(dtype, shape, [value] * element_count(shape))


def _flatten(values: Sequence[object]) -> list[object]:
    out: list[object] = []
    stack = [iter(values)]
    while stack:
        for item in stack[-1]:
            if isinstance(item, list):
                stack.append(iter(item))
                break
            if isinstance(item, str) or item is None:
                raise TensorDataError(f"{item!r} is not a number")
            out.append(item)
        else:
            stack.pop()
    return out
