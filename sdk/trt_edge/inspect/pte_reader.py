"""Read what an ExecuTorch `.pte` contains without loading it: methods, I/O, delegates, data.

A `.pte` is a FlatBuffer (schema `program.fbs`, file identifier `ET12`) optionally
followed by *segments* (constants, delegate blobs, named data). When segments exist,
ExecuTorch inserts an "extended header" (`eh00`) right after the FlatBuffer's root
offset and identifier, giving the FlatBuffer size and the file offset of the first
segment (`executorch.exir._serialize._program._ExtendedHeader`).

Why this module walks the FlatBuffer itself instead of calling ExecuTorch's private
`executorch.exir._serialize._program.deserialize_pte_binary`:

* that function takes the whole file as `bytes` and copies every segment into Python
  objects; a 2 GB `.pte` would need several GB of RAM;
* importing anything under `executorch.exir` imports torch (~360 MB RSS, seconds), so
  even parsing only the FlatBuffer part through it cannot inspect a file within the
  200 MB / 2 s budget.

So the file is memory-mapped and the FlatBuffer tables are read lazily, field by field,
with every offset bounds-checked (a malformed file raises `PteFormatError`, never
`struct.error`). Segments are never read; their sizes and offsets come from the table.
The field slots below mirror `program.fbs` of the pinned executorch (1.5.1); the tests
pin them against the `.fbs` shipped in the executorch wheel and cross-check every
result against `deserialize_pte_binary` on real `.pte` files, so an upstream schema
change fails the tests instead of silently misreading files.
"""

from __future__ import annotations

import mmap
import os
import struct
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from trt_edge_runner.bundle_format import DelegateInfo, EngineRecord
from trt_edge_runner.dtypes import dtype_info

from trt_edge.inspect.errors import PteFormatError

FILE_IDENTIFIER = b"ET12"
EXTENDED_HEADER_MAGIC = b"eh00"
# magic(4) + header length(4) + program size(8) + segment base offset(8); newer files
# add segment data size(8) — the same minimum ExecuTorch's `_ExtendedHeader` accepts.
EXTENDED_HEADER_MIN_LENGTH = 24

# FlatBuffer field slots (declaration order in program.fbs; a union takes two slots:
# `<name>_type` then `<name>`). Pinned by tests/inspect/test_pte_reader_schema.py.
SLOTS: dict[str, dict[str, int]] = {
    "Program": {
        "version": 0,
        "execution_plan": 1,
        "constant_buffer": 2,
        "backend_delegate_data": 3,
        "segments": 4,
        "constant_segment": 5,
        "mutable_data_segments": 6,
        "named_data": 7,
    },
    "ExecutionPlan": {
        "name": 0,
        "container_meta_type": 1,
        "values": 2,
        "inputs": 3,
        "outputs": 4,
        "chains": 5,
        "operators": 6,
        "delegates": 7,
        "non_const_buffer_sizes": 8,
        "non_const_buffer_device": 9,
    },
    "EValue": {"val_type": 0, "val": 1},
    "Tensor": {
        "scalar_type": 0,
        "storage_offset": 1,
        "sizes": 2,
        "dim_order": 3,
        "requires_grad": 4,
        "data_buffer_idx": 5,
        "allocation_info": 6,
        "layout": 7,
        "shape_dynamism": 8,
        "extra_tensor_info": 9,
    },
    "Chain": {"inputs": 0, "outputs": 1, "instructions": 2, "stacktrace": 3},
    "Operator": {"name": 0, "overload": 1},
    "BackendDelegate": {"id": 0, "processed": 1, "compile_specs": 2},
    "BackendDelegateDataReference": {"location": 0, "index": 1},
    "CompileSpec": {"key": 0, "value": 1},
    "BackendDelegateInlineData": {"data": 0},
    "Buffer": {"storage": 0},
    "DataSegment": {"offset": 0, "size": 1},
    "SubsegmentOffsets": {"segment_index": 0, "offsets": 1},
    "NamedData": {"key": 0, "segment_index": 1},
    "ExtraTensorInfo": {"mutable_data_segments_idx": 0, "fully_qualified_name": 1},
}

# union KernelTypes, 1-based (0 is NONE), in declaration order.
KERNEL_TYPES = (
    "none",
    "null",
    "int",
    "bool",
    "double",
    "tensor",
    "string",
    "int_list",
    "double_list",
    "bool_list",
    "tensor_list",
    "optional_tensor_list",
)

# enum ScalarType (scalar_type.fbs) → the dtype names bundle.json and numpy use.
SCALAR_TYPES: dict[int, str] = {
    0: "uint8",
    1: "int8",
    2: "int16",
    3: "int32",
    4: "int64",
    5: "float16",
    6: "float32",
    7: "float64",
    11: "bool",
    12: "qint8",
    13: "quint8",
    14: "qint32",
    15: "bfloat16",
    16: "quint4x2",
    17: "quint2x4",
    22: "bits16",
    23: "float8_e5m2",
    24: "float8_e4m3fn",
    25: "float8_e5m2fnuz",
    26: "float8_e4m3fnuz",
    27: "uint16",
    28: "uint32",
    29: "uint64",
}

Dynamism = Literal["static", "dynamic_bound", "dynamic_unbound"]
_DYNAMISM: tuple[Dynamism, ...] = ("static", "dynamic_bound", "dynamic_unbound")

Location = Literal["inline", "segment"]
SegmentRole = Literal["constants", "delegate", "named_data", "mutable_data", "unreferenced"]


# ---------------------------------------------------------------------------
# Result values
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class TensorInfo:
    """A planned tensor: for dynamic tensors `shape` is the upper bound the memory plan uses."""

    dtype: str
    shape: tuple[int, ...]
    dynamism: Dynamism

    def to_dict(self) -> dict[str, Any]:
        return {"dtype": self.dtype, "shape": list(self.shape), "dynamism": self.dynamism}


@dataclass(frozen=True)
class ValueInfo:
    """One method input or output: a tensor, or a non-tensor value (int, bool, list …)."""

    kind: str
    tensor: TensorInfo | None = None

    def to_dict(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"kind": self.kind}
        if self.tensor is not None:
            doc.update(self.tensor.to_dict())
        return doc


@dataclass(frozen=True)
class DelegateEntry:
    """One backend delegate of one method and where its processed blob lives.

    `offset` is the absolute file offset of the blob, so it can be sliced out of the
    mapped file without deserializing anything else.
    """

    backend_id: str
    method: str
    index: int
    location: Location
    data_index: int
    blob_size: int
    offset: int
    compile_specs: tuple[str, ...] = ()
    # The compile specs' values, in the order of `compile_specs` (bytes, as serialized).
    compile_spec_values: tuple[bytes, ...] = field(default=(), repr=False)

    def compile_spec(self, key: str) -> bytes | None:
        """The value of compile spec `key`, or None when the delegate has none."""
        for name, value in zip(self.compile_specs, self.compile_spec_values, strict=False):
            if name == key:
                return value
        return None

    def to_delegate_info(
        self,
        profile_signature: dict[str, Any] | None = None,
        engine: EngineRecord | None = None,
    ) -> DelegateInfo:
        """The bundle.json record of this delegate (the build adds the profile signature
        and, for a TensorRT engine, its record)."""
        return DelegateInfo(
            backend_id=self.backend_id,
            method=self.method,
            index=self.index,
            blob_size=self.blob_size,
            profile_signature=profile_signature,
            engine=engine,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "backend_id": self.backend_id,
            "method": self.method,
            "index": self.index,
            "location": self.location,
            "data_index": self.data_index,
            "blob_size": self.blob_size,
            "offset": self.offset,
            "compile_specs": list(self.compile_specs),
        }


@dataclass(frozen=True)
class MethodInfo:
    """One execution plan. `memory_planned` is `non_const_buffer_sizes[1:]` (slot 0 is reserved)."""

    name: str
    inputs: tuple[ValueInfo, ...]
    outputs: tuple[ValueInfo, ...]
    memory_planned: tuple[int, ...]
    operators: tuple[str, ...]
    instructions: int
    delegates: tuple[DelegateEntry, ...]

    @property
    def planned_bytes(self) -> int:
        return sum(self.memory_planned)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "inputs": [v.to_dict() for v in self.inputs],
            "outputs": [v.to_dict() for v in self.outputs],
            "memory_planned": list(self.memory_planned),
            "planned_bytes": self.planned_bytes,
            "operators": list(self.operators),
            "instructions": self.instructions,
            "delegates": [d.to_dict() for d in self.delegates],
        }


@dataclass(frozen=True)
class SegmentInfo:
    """One segment after the FlatBuffer; `offset` is absolute in the file."""

    index: int
    offset: int
    size: int
    role: SegmentRole

    def to_dict(self) -> dict[str, Any]:
        return {"index": self.index, "offset": self.offset, "size": self.size, "role": self.role}


@dataclass(frozen=True)
class NamedDataInfo:
    """A named blob (e.g. XNNPACK weights shared by delegates) stored in a segment."""

    key: str
    segment_index: int
    size: int

    def to_dict(self) -> dict[str, Any]:
        return {"key": self.key, "segment_index": self.segment_index, "size": self.size}


@dataclass(frozen=True)
class PteInfo:
    """Everything `read_pte` learned about one `.pte` file."""

    path: str
    file_size: int
    file_identifier: str
    version: int
    program_size: int
    segment_base_offset: int
    segment_data_size: int
    methods: tuple[MethodInfo, ...]
    segments: tuple[SegmentInfo, ...]
    named_data: tuple[NamedDataInfo, ...]
    constant_tensors: int
    constant_bytes: int
    mutable_bytes: int
    inline_delegate_bytes: int = 0
    notes: tuple[str, ...] = field(default=())

    @property
    def delegates(self) -> tuple[DelegateEntry, ...]:
        return tuple(d for m in self.methods for d in m.delegates)

    @property
    def named_data_bytes(self) -> int:
        seen: dict[int, int] = {}
        for item in self.named_data:
            seen[item.segment_index] = item.size
        return sum(seen.values())

    def method(self, name: str) -> MethodInfo:
        for m in self.methods:
            if m.name == name:
                return m
        known = ", ".join(m.name for m in self.methods) or "none"
        raise KeyError(f"{self.path}: no method {name!r} (methods: {known})")

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "pte",
            "path": self.path,
            "file_size": self.file_size,
            "file_identifier": self.file_identifier,
            "version": self.version,
            "program_size": self.program_size,
            "segment_base_offset": self.segment_base_offset,
            "segment_data_size": self.segment_data_size,
            "methods": [m.to_dict() for m in self.methods],
            "segments": [s.to_dict() for s in self.segments],
            "named_data": [n.to_dict() for n in self.named_data],
            "named_data_bytes": self.named_data_bytes,
            "constant_tensors": self.constant_tensors,
            "constant_bytes": self.constant_bytes,
            "mutable_bytes": self.mutable_bytes,
            "inline_delegate_bytes": self.inline_delegate_bytes,
            "notes": list(self.notes),
        }


# ---------------------------------------------------------------------------
# Bounds-checked FlatBuffer access over a mapped file
# ---------------------------------------------------------------------------

_U8 = struct.Struct("<B")
_I8 = struct.Struct("<b")
_U16 = struct.Struct("<H")
_I32 = struct.Struct("<i")
_U32 = struct.Struct("<I")
_I64 = struct.Struct("<q")
_U64 = struct.Struct("<Q")


class _Buffer:
    """The mapped bytes plus the file name used in every error message."""

    def __init__(self, data: memoryview | bytes, label: str) -> None:
        self.data = data
        self.size = len(data)
        self.label = label

    def fail(self, message: str) -> PteFormatError:
        return PteFormatError(
            f"{self.label}: {message}; the file is not a readable ExecuTorch program "
            "(truncated or corrupted?) — re-copy it or rebuild it with `trt-edge build`"
        )

    def read(self, fmt: struct.Struct, pos: int, what: str) -> Any:
        if pos < 0 or pos + fmt.size > self.size:
            raise self.fail(f"{what} at byte {pos} lies outside the file ({self.size} bytes)")
        return fmt.unpack_from(self.data, pos)[0]

    def table(self, pos: int, what: str) -> _Table:
        vtable = pos - self.read(_I32, pos, f"{what} table")
        vt_size = self.read(_U16, vtable, f"{what} vtable")
        if vt_size < 4 or vt_size % 2:
            raise self.fail(f"{what} vtable at byte {vtable} has invalid size {vt_size}")
        return _Table(self, pos, vtable, vt_size, what)


class _Table:
    """One FlatBuffer table: fields are looked up by slot through its vtable."""

    def __init__(self, buf: _Buffer, pos: int, vtable: int, vt_size: int, what: str) -> None:
        self.buf = buf
        self.pos = pos
        self.vtable = vtable
        self.vt_size = vt_size
        self.what = what

    def _field(self, slot: int) -> int:
        entry = 4 + 2 * slot
        if entry >= self.vt_size:
            return 0
        off: int = self.buf.read(_U16, self.vtable + entry, f"{self.what} vtable")
        return off

    def scalar(self, slot: int, fmt: struct.Struct, default: int = 0) -> int:
        off = self._field(slot)
        if off == 0:
            return default
        value: int = self.buf.read(fmt, self.pos + off, f"{self.what} field {slot}")
        return value

    def _indirect(self, slot: int) -> int | None:
        off = self._field(slot)
        if off == 0:
            return None
        at = self.pos + off
        return at + int(self.buf.read(_U32, at, f"{self.what} field {slot}"))

    def table(self, slot: int, what: str) -> _Table | None:
        target = self._indirect(slot)
        return None if target is None else self.buf.table(target, what)

    def vector(self, slot: int, elem_size: int, what: str) -> tuple[int, int]:
        """(start, length) of a vector field; (0, 0) when absent."""
        target = self._indirect(slot)
        if target is None:
            return 0, 0
        length = int(self.buf.read(_U32, target, f"{what} length"))
        start = target + 4
        if start + length * elem_size > self.buf.size:
            raise self.buf.fail(
                f"{what} ({length} × {elem_size} bytes at byte {start}) runs past the end "
                f"of the file ({self.buf.size} bytes)"
            )
        return start, length

    def raw(self, slot: int, what: str) -> bytes:
        start, length = self.vector(slot, 1, what)
        return bytes(self.buf.data[start : start + length])

    def string(self, slot: int, what: str) -> str:
        start, length = self.vector(slot, 1, what)
        if length == 0:
            return ""
        raw = bytes(self.buf.data[start : start + length])
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise self.buf.fail(f"{what} at byte {start} is not UTF-8") from None

    def tables(self, slot: int, what: str) -> list[_Table]:
        start, length = self.vector(slot, 4, what)
        out = []
        for i in range(length):
            at = start + 4 * i
            out.append(self.buf.table(at + int(self.buf.read(_U32, at, what)), f"{what}[{i}]"))
        return out

    def scalars(self, slot: int, fmt: struct.Struct, what: str) -> list[int]:
        start, length = self.vector(slot, fmt.size, what)
        return [
            int(v[0]) for v in fmt.iter_unpack(self.buf.data[start : start + length * fmt.size])
        ]


# ---------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Header:
    program_size: int
    segment_base_offset: int
    segment_data_size: int


def _read_header(buf: _Buffer) -> _Header:
    if buf.size < 8:
        raise buf.fail(f"only {buf.size} bytes, a .pte starts with an 8-byte FlatBuffer header")
    ident = bytes(buf.data[4:8])
    if ident != FILE_IDENTIFIER:
        raise buf.fail(
            f"file identifier is {ident!r}, expected {FILE_IDENTIFIER!r} "
            "(is this an ExecuTorch .pte of a supported schema version?)"
        )
    eh = bytes(buf.data[8 : 8 + 32])
    if len(eh) >= EXTENDED_HEADER_MIN_LENGTH and eh[:4] == EXTENDED_HEADER_MAGIC:
        length = int.from_bytes(eh[4:8], "little")
        if length >= EXTENDED_HEADER_MIN_LENGTH:
            program_size = int.from_bytes(eh[8:16], "little")
            base = int.from_bytes(eh[16:24], "little")
            data_size = int.from_bytes(eh[24:32], "little") if length >= 32 else 0
            if program_size > buf.size:
                raise buf.fail(
                    f"extended header says the program is {program_size} bytes, "
                    f"the file has {buf.size}"
                )
            if base > buf.size:
                raise buf.fail(
                    f"extended header puts the first segment at byte {base}, "
                    f"past the end of the file ({buf.size} bytes)"
                )
            return _Header(program_size, base, data_size)
    return _Header(buf.size, 0, 0)


def _value(buf: _Buffer, values: list[_Table], index: int, what: str) -> ValueInfo:
    if not 0 <= index < len(values):
        raise buf.fail(f"{what} refers to value {index}, the plan has {len(values)}")
    ev = values[index]
    s = SLOTS["EValue"]
    tag = ev.scalar(s["val_type"], _U8)
    kind = KERNEL_TYPES[tag] if tag < len(KERNEL_TYPES) else f"unknown({tag})"
    if kind != "tensor":
        return ValueInfo(kind=kind)
    t = ev.table(s["val"], f"{what} tensor")
    if t is None:
        raise buf.fail(f"{what} is a tensor without a tensor table")
    ts = SLOTS["Tensor"]
    scalar = t.scalar(ts["scalar_type"], _I8)
    dyn = t.scalar(ts["shape_dynamism"], _I8)
    return ValueInfo(
        kind="tensor",
        tensor=TensorInfo(
            dtype=SCALAR_TYPES.get(scalar, f"scalar_type({scalar})"),
            shape=tuple(t.scalars(ts["sizes"], _I32, f"{what} sizes")),
            dynamism=_DYNAMISM[dyn] if 0 <= dyn < len(_DYNAMISM) else "dynamic_unbound",
        ),
    )


class _ProgramReader:
    """Walks one Program table; keeps the segment list and which role each segment plays."""

    def __init__(self, buf: _Buffer) -> None:
        self.buf = buf
        self.header = _read_header(buf)
        self.root = buf.table(int(buf.read(_U32, 0, "root offset")), "Program")
        self.roles: dict[int, SegmentRole] = {}
        self.segments = self._segments()
        # Inline delegate data: (absolute offset, size) of each entry's byte vector.
        self.inline_data = [
            entry.vector(SLOTS["BackendDelegateInlineData"]["data"], 1, f"delegate data {i}")
            for i, entry in enumerate(
                self.root.tables(SLOTS["Program"]["backend_delegate_data"], "delegate data")
            )
        ]

    def _segments(self) -> list[tuple[int, int]]:
        base = self.header.segment_base_offset
        out = []
        for i, seg in enumerate(self.root.tables(SLOTS["Program"]["segments"], "segments")):
            off = seg.scalar(SLOTS["DataSegment"]["offset"], _U64)
            size = seg.scalar(SLOTS["DataSegment"]["size"], _U64)
            # Without an extended header ExecuTorch still lists empty segments (e.g. an
            # empty constant segment); anything with bytes needs a segment base.
            if (base == 0 and size > 0) or base + off + size > self.buf.size:
                raise self.buf.fail(
                    f"segment {i} (offset {off}, {size} bytes, segment base {base}) runs past "
                    f"the end of the file ({self.buf.size} bytes)"
                )
            out.append((base + off, size))
        return out

    def segment(self, index: int, what: str, role: SegmentRole) -> tuple[int, int]:
        if not 0 <= index < len(self.segments):
            raise self.buf.fail(
                f"{what} refers to segment {index}, the file has {len(self.segments)}"
            )
        self.roles.setdefault(index, role)
        return self.segments[index]

    def delegate(self, method: str, d: int, table: _Table) -> DelegateEntry:
        bs = SLOTS["BackendDelegate"]
        backend_id = table.string(bs["id"], f"{method} delegate {d} id")
        who = f"method {method!r} delegate {d} ({backend_id})"
        ref = table.table(bs["processed"], f"{method} delegate {d} processed")
        if ref is None:
            raise self.buf.fail(f"{who} has no data reference")
        rs = SLOTS["BackendDelegateDataReference"]
        loc_raw = ref.scalar(rs["location"], _I8)
        data_index = ref.scalar(rs["index"], _U32)
        location: Location
        if loc_raw == 0:
            location = "inline"
            if not 0 <= data_index < len(self.inline_data):
                raise self.buf.fail(
                    f"{who} refers to inline data {data_index}, "
                    f"the program has {len(self.inline_data)}"
                )
            offset, size = self.inline_data[data_index]
        elif loc_raw == 1:
            location = "segment"
            offset, size = self.segment(data_index, who, "delegate")
        else:
            raise self.buf.fail(f"{who} has unknown data location {loc_raw}")
        spec_tables = table.tables(bs["compile_specs"], f"{who} compile_specs")
        specs = tuple(
            cs.string(SLOTS["CompileSpec"]["key"], f"{who} compile spec") for cs in spec_tables
        )
        values = tuple(
            cs.raw(SLOTS["CompileSpec"]["value"], f"{who} compile spec value") for cs in spec_tables
        )
        return DelegateEntry(
            backend_id=backend_id,
            method=method,
            index=d,
            location=location,
            data_index=data_index,
            blob_size=size,
            offset=offset,
            compile_specs=specs,
            compile_spec_values=values,
        )

    def method(self, p: int, plan: _Table) -> MethodInfo:
        eps = SLOTS["ExecutionPlan"]
        name = plan.string(eps["name"], f"execution_plan[{p}].name")
        values = plan.tables(eps["values"], f"{name}.values")
        inputs = tuple(
            _value(self.buf, values, v, f"method {name!r} input {k}")
            for k, v in enumerate(plan.scalars(eps["inputs"], _I32, f"{name}.inputs"))
        )
        outputs = tuple(
            _value(self.buf, values, v, f"method {name!r} output {k}")
            for k, v in enumerate(plan.scalars(eps["outputs"], _I32, f"{name}.outputs"))
        )
        sizes = plan.scalars(eps["non_const_buffer_sizes"], _I64, f"{name}.non_const_buffer_sizes")
        operators = []
        for op in plan.tables(eps["operators"], f"{name}.operators"):
            opname = op.string(SLOTS["Operator"]["name"], f"{name} operator name")
            overload = op.string(SLOTS["Operator"]["overload"], f"{name} operator overload")
            operators.append(f"{opname}.{overload}" if overload else opname)
        instructions = sum(
            chain.vector(SLOTS["Chain"]["instructions"], 4, f"{name} chain")[1]
            for chain in plan.tables(eps["chains"], f"{name}.chains")
        )
        delegates = tuple(
            self.delegate(name, d, table)
            for d, table in enumerate(plan.tables(eps["delegates"], f"{name}.delegates"))
        )
        return MethodInfo(
            name=name,
            inputs=inputs,
            outputs=outputs,
            memory_planned=tuple(sizes[1:]),
            operators=tuple(operators),
            instructions=instructions,
            delegates=delegates,
        )

    def constants(self) -> tuple[int, int]:
        """(tensor count, bytes): the constant segment (modern) or inline buffers (old files)."""
        ps = SLOTS["Program"]
        tensors = 0
        size = 0
        cseg = self.root.table(ps["constant_segment"], "constant_segment")
        if cseg is not None:
            cs = SLOTS["SubsegmentOffsets"]
            offsets = cseg.vector(cs["offsets"], 8, "constant_segment.offsets")[1]
            if offsets > 0:
                # Entry 0 is ExecuTorch's placeholder for "no constant data".
                tensors = offsets - 1
                index = cseg.scalar(cs["segment_index"], _U32)
                if self.segments or index != 0:
                    size = self.segment(index, "constant_segment", "constants")[1]
        for i, buffer in enumerate(self.root.tables(ps["constant_buffer"], "constant_buffer")):
            if i > 0:  # buffer 0 is the same placeholder in the inline layout
                tensors += 1
                size += buffer.vector(SLOTS["Buffer"]["storage"], 1, f"constant_buffer[{i}]")[1]
        return tensors, size

    def mutable_bytes(self) -> int:
        total = 0
        subs = self.root.tables(SLOTS["Program"]["mutable_data_segments"], "mutable_data")
        for i, sub in enumerate(subs):
            index = sub.scalar(SLOTS["SubsegmentOffsets"]["segment_index"], _U32)
            total += self.segment(index, f"mutable_data_segments[{i}]", "mutable_data")[1]
        return total

    def named_data(self) -> tuple[NamedDataInfo, ...]:
        ns = SLOTS["NamedData"]
        out = []
        for i, nd in enumerate(self.root.tables(SLOTS["Program"]["named_data"], "named_data")):
            key = nd.string(ns["key"], f"named_data[{i}].key")
            index = nd.scalar(ns["segment_index"], _U32)
            size = self.segment(index, f"named_data {key!r}", "named_data")[1]
            out.append(NamedDataInfo(key=key, segment_index=index, size=size))
        return tuple(out)


def _parse(buf: _Buffer, path: str) -> PteInfo:
    reader = _ProgramReader(buf)
    header = reader.header
    methods = tuple(
        reader.method(p, plan)
        for p, plan in enumerate(
            reader.root.tables(SLOTS["Program"]["execution_plan"], "execution_plan")
        )
    )
    constant_tensors, constant_bytes = reader.constants()
    mutable_bytes = reader.mutable_bytes()
    named = reader.named_data()
    notes: list[str] = []
    if header.segment_base_offset == 0 and buf.size > 0:
        notes.append("no extended header: every byte is inside the FlatBuffer")
    return PteInfo(
        path=path,
        file_size=buf.size,
        file_identifier=FILE_IDENTIFIER.decode(),
        version=reader.root.scalar(SLOTS["Program"]["version"], _U32),
        program_size=header.program_size,
        segment_base_offset=header.segment_base_offset,
        segment_data_size=header.segment_data_size,
        methods=methods,
        segments=tuple(
            SegmentInfo(index=i, offset=o, size=s, role=reader.roles.get(i, "unreferenced"))
            for i, (o, s) in enumerate(reader.segments)
        ),
        named_data=named,
        constant_tensors=constant_tensors,
        constant_bytes=constant_bytes,
        mutable_bytes=mutable_bytes,
        inline_delegate_bytes=sum(size for _, size in reader.inline_data),
        notes=tuple(notes),
    )


class PteFile:
    """An open, memory-mapped `.pte`: its `info` plus zero-copy access to delegate blobs.

    `offset`/`size` select a `.pte` stored inside a larger file (a member of an
    uncompressed bundle `.tar`), so it is read in place without extracting it.
    Use as a context manager; release views from `delegate_blob` before closing.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        offset: int = 0,
        size: int | None = None,
        label: str | None = None,
    ) -> None:
        self.path = Path(path)
        self.label = label or str(self.path)
        self._map: mmap.mmap | None = None
        self._view: memoryview | None = None
        try:
            self._file = open(self.path, "rb")  # noqa: SIM115 — closed in close()
        except FileNotFoundError:
            raise PteFormatError(f"{self.label}: no such file") from None
        except IsADirectoryError:
            raise PteFormatError(f"{self.label}: is a directory, expected a .pte file") from None
        except OSError as exc:
            raise PteFormatError(f"{self.label}: cannot open: {exc.strerror}") from None
        try:
            total = os.fstat(self._file.fileno()).st_size
            end = total if size is None else min(offset + size, total)
            if total > 0:
                self._map = mmap.mmap(self._file.fileno(), 0, access=mmap.ACCESS_READ)
                self._view = memoryview(self._map)[offset:end]
            data: memoryview | bytes = self._view if self._view is not None else b""
            self.info = _parse(_Buffer(data, self.label), self.label)
        except BaseException:
            self.close()
            raise

    @property
    def data(self) -> memoryview | bytes:
        """The whole `.pte` as a read-only view (no copy)."""
        return self._view if self._view is not None else b""

    def delegate_blob(self, delegate: DelegateEntry) -> memoryview:
        """A read-only view of one delegate's processed blob, straight from the mapping."""
        data = self.data
        end = delegate.offset + delegate.blob_size
        if end > len(data):
            raise PteFormatError(
                f"{self.label}: delegate {delegate.index} ({delegate.backend_id}) of method "
                f"{delegate.method!r} runs past the end of the file"
            )
        return memoryview(data)[delegate.offset : end]

    def close(self) -> None:
        if self._view is not None:
            self._view.release()
            self._view = None
        if self._map is not None:
            # If a caller still holds a delegate_blob view, the mapping is freed when
            # that view is dropped.
            with suppress(BufferError):
                self._map.close()
            self._map = None
        f = getattr(self, "_file", None)
        if f is not None:
            f.close()

    def __enter__(self) -> PteFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@contextmanager
def open_pte(path: str | os.PathLike[str]) -> Iterator[PteFile]:
    """`with open_pte(p) as pte:` — `pte.info` and `pte.delegate_blob(d)`."""
    pte = PteFile(path)
    try:
        yield pte
    finally:
        pte.close()


def read_pte(path: str | os.PathLike[str]) -> PteInfo:
    """Read the structure of a `.pte` (methods, I/O, delegates, data sizes) via `mmap`.

    Never reads segment contents, so the cost does not grow with weight size. Raises
    `PteFormatError` naming the file and the broken reference for anything malformed.
    """
    with open_pte(path) as pte:
        return pte.info


def read_delegate_blob(path: str | os.PathLike[str], delegate: DelegateEntry) -> bytes:
    """Copy one delegate blob out of a `.pte` (for small blobs; use `open_pte` for large)."""
    with open_pte(path) as pte:
        view = pte.delegate_blob(delegate)
        try:
            return bytes(view)
        finally:
            view.release()


@dataclass(frozen=True)
class MutableBuffer:
    """A named, memory-planned tensor of one method: a buffer the program keeps and mutates
    across executions (a causal LM's KV cache). The emitter names these tensors
    (`ExtraTensorInfo.fully_qualified_name`) and plans them like activations, so their
    bytes are part of the method's `planned_bytes`."""

    method: str
    name: str
    dtype: str
    shape: tuple[int, ...]
    nbytes: int | None  # None for a dtype whose element size this reader does not know


def read_mutable_buffers(path: str | os.PathLike[str]) -> tuple[MutableBuffer, ...]:
    """Every named, memory-planned tensor of every method of the `.pte` at `path`.

    Walks each plan's value table (tensor headers only: no segment is read), so the cost
    follows the number of values, not the size of the weights.
    """
    ts, xs = SLOTS["Tensor"], SLOTS["ExtraTensorInfo"]
    found: list[MutableBuffer] = []
    with open_pte(path) as pte:
        buf = _Buffer(pte.data, pte.label)
        reader = _ProgramReader(buf)
        eps = SLOTS["ExecutionPlan"]
        for p, plan in enumerate(reader.root.tables(SLOTS["Program"]["execution_plan"], "plans")):
            method = plan.string(eps["name"], f"execution_plan[{p}].name")
            for i, ev in enumerate(plan.tables(eps["values"], f"{method}.values")):
                if ev.scalar(SLOTS["EValue"]["val_type"], _U8) != KERNEL_TYPES.index("tensor"):
                    continue
                tensor = ev.table(SLOTS["EValue"]["val"], f"{method} value {i}")
                if tensor is None or tensor.table(ts["allocation_info"], "allocation") is None:
                    continue
                extra = tensor.table(ts["extra_tensor_info"], f"{method} value {i} extra info")
                name = "" if extra is None else extra.string(xs["fully_qualified_name"], "name")
                if not name:
                    continue
                scalar = tensor.scalar(ts["scalar_type"], _I8)
                dtype = SCALAR_TYPES.get(scalar, f"scalar_type({scalar})")
                shape = tuple(tensor.scalars(ts["sizes"], _I32, f"{method} value {i} sizes"))
                info = dtype_info(dtype)
                count = 1
                for extent in shape:
                    count *= extent
                nbytes = None if info is None else count * info.itemsize
                found.append(MutableBuffer(method, name, dtype, shape, nbytes))
    return tuple(found)
