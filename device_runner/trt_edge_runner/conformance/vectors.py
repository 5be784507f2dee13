"""Reading a vectors file: one JSON object with a `format` and (usually) `cases`.

Standard library only: this module ships to devices.
"""

from __future__ import annotations

import json
from typing import Any

from trt_edge_runner.errors import EXIT_BAD_INPUT, TrtEdgeError

# A file without a `format` key is profile selection: the first format, kept as it was.
DEFAULT_FORMAT = "profile_selection"


class VectorFormatError(TrtEdgeError, ValueError):
    """A vectors file or case that does not follow the format; the message says where."""

    exit_code = EXIT_BAD_INPUT


def field(obj: Any, key: str, where: str) -> Any:
    if not isinstance(obj, dict) or key not in obj:
        raise VectorFormatError(f"{where}: missing {key!r}")
    return obj[key]


def read_vectors(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except OSError as exc:
        raise VectorFormatError(f"{path}: cannot read: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise VectorFormatError(f"{path}:{exc.lineno}:{exc.colno}: not JSON: {exc.msg}") from None
    if not isinstance(doc, dict):
        raise VectorFormatError(f"{path}: expected a JSON object")
    return doc


def format_of(doc: dict[str, Any], path: str) -> str:
    fmt = doc.get("format", DEFAULT_FORMAT)
    if not isinstance(fmt, str):
        raise VectorFormatError(f"{path}: 'format' must be a string")
    return fmt


def cases_of(doc: dict[str, Any], path: str) -> list[tuple[Any, str]]:
    """Each raw case with its location (`FILE: cases[3]`) for messages."""
    raw = field(doc, "cases", path)
    if not isinstance(raw, list):
        raise VectorFormatError(f"{path}: 'cases' must be a list")
    return [(c, f"{path}: cases[{i}]") for i, c in enumerate(raw)]


def load_vector_cases(path: str) -> list[tuple[Any, str]]:
    return cases_of(read_vectors(path), path)


def name_of(raw: Any, where: str) -> str:
    name = field(raw, "name", where)
    if not isinstance(name, str):
        raise VectorFormatError(f"{where}.name: expected a string")
    return name


def boolean(raw: Any, key: str, where: str) -> bool:
    value = field(raw, key, where)
    if not isinstance(value, bool):
        raise VectorFormatError(f"{where}.{key}: expected true or false")
    return value


def integer(raw: Any, key: str, where: str) -> int:
    value = field(raw, key, where)
    if not isinstance(value, int) or isinstance(value, bool):
        raise VectorFormatError(f"{where}.{key}: expected an integer")
    return value
