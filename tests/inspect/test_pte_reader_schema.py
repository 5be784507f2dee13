"""Pin pte_reader's FlatBuffer slots to the program.fbs shipped in the installed executorch."""

from __future__ import annotations

import re
from importlib.util import find_spec
from pathlib import Path

from trt_edge.inspect.pte_reader import KERNEL_TYPES, SCALAR_TYPES, SLOTS


def _schema_dir() -> Path:
    spec = find_spec("executorch")
    assert spec is not None and spec.submodule_search_locations
    for root in spec.submodule_search_locations:
        candidate = Path(root) / "exir" / "_serialize"
        if (candidate / "program.fbs").exists():
            return candidate
    raise AssertionError("program.fbs not found in the executorch wheel")


def _strip(text: str) -> str:
    return re.sub(r"//[^\n]*", "", text)


def _tables(text: str) -> dict[str, list[str]]:
    """table NAME { field: type; ... } → slot names in order (a union field takes 2 slots)."""
    unions = set(re.findall(r"union\s+(\w+)", text))
    out: dict[str, list[str]] = {}
    for name, body in re.findall(r"table\s+(\w+)\s*\{([^}]*)\}", text):
        slots: list[str] = []
        for fname, ftype in re.findall(r"(\w+)\s*:\s*([\w\[\]]+)", body):
            if ftype in unions:
                slots.append(f"{fname}_type")
            slots.append(fname)
        out[name] = slots
    return out


def test_slots_match_program_fbs() -> None:
    tables = _tables(_strip((_schema_dir() / "program.fbs").read_text()))
    for table, fields in SLOTS.items():
        assert table in tables, table
        for fname, slot in fields.items():
            assert tables[table].index(fname) == slot, (table, fname)


def test_file_identifier_and_union_order_match_program_fbs() -> None:
    text = _strip((_schema_dir() / "program.fbs").read_text())
    assert re.search(r'file_identifier\s+"ET12"', text)
    body = re.search(r"union\s+KernelTypes\s*\{([^}]*)\}", text)
    assert body is not None
    members = [m.strip() for m in body.group(1).split(",") if m.strip()]
    expected = [
        "Null", "Int", "Bool", "Double", "Tensor", "String",
        "IntList", "DoubleList", "BoolList", "TensorList", "OptionalTensorList",
    ]  # fmt: skip
    assert members == expected
    assert [k.replace("_", "") for k in KERNEL_TYPES[1:]] == [m.lower() for m in members]


def test_scalar_types_match_scalar_type_fbs() -> None:
    text = _strip((_schema_dir() / "scalar_type.fbs").read_text())
    values = {int(v): n for n, v in re.findall(r"(\w+)\s*=\s*(\d+)", text)}
    assert set(values) == set(SCALAR_TYPES)
