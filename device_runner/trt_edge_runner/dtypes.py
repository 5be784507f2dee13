"""The one table of tensor dtypes a manifest and a bundle may name.

Every place that turns a dtype name into something else reads this table: the
manifest's schema (`trt_edge.manifest.models.Dtype`) and its integer rule, the
Python runner (torch dtypes), random inputs and `.npz` files (numpy dtypes), the
host's validation samples, and — through `tests/vectors/dtypes.json`, written
from this table and read by the C++ conformance binary `trt_edge_dtype_conformance`
— the C++ runner's own table (`device_runner/cpp/runner/dtypes.h`). Rows are in
the order the manifest schema lists them.

`scalar_type` is the ExecuTorch `ScalarType` code (the same numbering as c10's):
what a `.pte` stores and what the C++ runner hands to `from_blob`.

bfloat16 has no numpy dtype. Where numpy is the carrier (random inputs, `.npz`
and `.npy` files) a bfloat16 *input* is refused with a message naming it (feed
`torch.bfloat16` tensors through `Runner.run` instead); a bfloat16 *output* is
widened to float32, which is exact (every bfloat16 value is a float32 value), by
both runners, so saved outputs stay comparable. The C++ runner's deterministic
inputs (zeros) need no numpy and work for bfloat16 too.

Standard library only: this module ships to devices.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

DtypeKind = Literal["float", "int", "bool"]


@dataclass(frozen=True)
class DtypeInfo:
    """One dtype: its name in manifests and bundles, and what each consumer calls it."""

    name: str
    numpy: str | None  # numpy's name; None where numpy has no such dtype (bfloat16)
    torch: str  # the attribute of the `torch` module
    itemsize: int  # bytes per element
    scalar_type: int  # ExecuTorch / c10 ScalarType code
    kind: DtypeKind


DTYPES: tuple[DtypeInfo, ...] = (
    DtypeInfo("float32", "float32", "float32", 4, 6, "float"),
    DtypeInfo("float16", "float16", "float16", 2, 5, "float"),
    DtypeInfo("bfloat16", None, "bfloat16", 2, 15, "float"),
    DtypeInfo("float64", "float64", "float64", 8, 7, "float"),
    DtypeInfo("int64", "int64", "int64", 8, 4, "int"),
    DtypeInfo("int32", "int32", "int32", 4, 3, "int"),
    DtypeInfo("int16", "int16", "int16", 2, 2, "int"),
    DtypeInfo("int8", "int8", "int8", 1, 1, "int"),
    DtypeInfo("uint8", "uint8", "uint8", 1, 0, "int"),
    DtypeInfo("bool", "bool", "bool", 1, 11, "bool"),
)

BY_NAME: dict[str, DtypeInfo] = {d.name: d for d in DTYPES}
DTYPE_NAMES: tuple[str, ...] = tuple(d.name for d in DTYPES)
INTEGER_DTYPES: frozenset[str] = frozenset(d.name for d in DTYPES if d.kind == "int")
NUMPY_DTYPES: tuple[str, ...] = tuple(d.name for d in DTYPES if d.numpy is not None)

# What a bfloat16 output becomes where numpy carries it (exact: bf16 ⊂ f32).
NUMPY_WIDENING: dict[str, str] = {"bfloat16": "float32"}


def dtype_info(name: str) -> DtypeInfo | None:
    """The table's row for `name`, or None for a name no manifest may use."""
    return BY_NAME.get(name)
