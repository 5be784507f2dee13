"""Paths into a manifest and the YAML positions they came from.

A path is a tuple of keys and list indices, e.g. `("profiles", 1, "dims", "seq")`,
shown as `profiles[1].dims.seq`. The parse step records, for every path, where
its key and its value start in the file, so any later step (schema, semantic)
can point at the exact line and column of the thing it complains about.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

PathPart = str | int
JsonPath = tuple[PathPart, ...]


def format_path(path: JsonPath) -> str:
    """`("profiles", 1, "dims", "seq")` → `profiles[1].dims.seq`."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


@dataclass(frozen=True)
class Position:
    """1-based line and column."""

    line: int
    col: int


def _nearest(values: Mapping[JsonPath, Position], path: JsonPath) -> Position:
    """Position of the value at `path`, or of the nearest enclosing value that exists."""
    probe = path
    while probe:
        if probe in values:
            return values[probe]
        probe = probe[:-1]
    return values.get((), Position(1, 1))


class LocationIndex:
    """Where each path's key and value start in the source file (filled in while parsing)."""

    def __init__(self) -> None:
        self.keys: dict[JsonPath, Position] = {}
        self.values: dict[JsonPath, Position] = {}
        self.raw: dict[JsonPath, str] = {}  # scalar text as written

    def value(self, path: JsonPath) -> Position:
        """Position of the value at `path`, or of the nearest enclosing value that exists."""
        return _nearest(self.values, path)

    def key(self, path: JsonPath) -> Position:
        """Position of the key naming `path` (falls back to its value, then to the parent)."""
        if path in self.keys:
            return self.keys[path]
        return self.value(path)


@dataclass(frozen=True)
class SourceLocations:
    """Where each value of a manifest starts in `file`: the parse step's positions, carried.

    The resolved manifest keeps this so that a later stage's error (a missing
    entrypoint function, a dtype the backend cannot build) points at the line to fix
    without anyone parsing the YAML again.
    """

    file: Path
    values: Mapping[JsonPath, Position]  # read-only (a MappingProxyType)

    def where(self, *path: PathPart) -> str:
        """`FILE:LINE:COL` of the value at `path`, or of the nearest enclosing value."""
        pos = _nearest(self.values, path)
        return f"{self.file}:{pos.line}:{pos.col}"
