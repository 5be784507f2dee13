"""Bundle-layout vectors (`tests/vectors/bundle_layouts.json`) against the integrity rule.

Each case describes a bundle tree as data (see `tests/vectors/generate_bundle_layouts.py`
for the node types); it is materialised in a fresh temporary directory — real files,
links and fifos — and `bundle_integrity.layout_problems` must report exactly the
expected set of (kind, path). The C++ binary `trt_edge_bundle_conformance` does the
same with its own implementation. The file's `caps` must equal this module's caps.

Standard library only: this module ships to devices.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from trt_edge_runner import bundle_integrity
from trt_edge_runner.conformance.vectors import VectorFormatError, field, name_of

CAPS = {
    "max_document_bytes": bundle_integrity.MAX_DOCUMENT_BYTES,
    "max_file_bytes": bundle_integrity.MAX_FILE_BYTES,
    "max_bundle_bytes": bundle_integrity.MAX_BUNDLE_BYTES,
    "max_entries": bundle_integrity.MAX_ENTRIES,
}


def make_node(root: Path, node: Any, where: str) -> None:
    """Create one node of a case below `root` (its folders as needed)."""
    rel = field(node, "path", where)
    kind = field(node, "type", where)
    if not isinstance(rel, str) or not isinstance(kind, str):
        raise VectorFormatError(f"{where}: 'path' and 'type' must be strings")
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "file":
        if "text" in node:
            path.write_bytes(str(node["text"]).encode("utf-8"))
        else:
            with open(path, "wb") as f:
                f.truncate(int(field(node, "size", where)))
    elif kind == "dir":
        path.mkdir(exist_ok=True)
    elif kind == "symlink":
        os.symlink(str(field(node, "target", where)), path)
    elif kind == "hardlink":
        os.link(root / str(field(node, "target", where)), path)
    elif kind == "fifo":
        os.mkfifo(path)
    else:
        raise VectorFormatError(f"{where}.type: unknown node type {kind!r}")


def _expected(raw: Any, where: str) -> set[tuple[str, str]]:
    expect = field(raw, "expect", where)
    if not isinstance(expect, list):
        raise VectorFormatError(f"{where}.expect: expected a list of problems")
    kinds = {k.value for k in bundle_integrity.ProblemKind}
    out = set()
    for i, p in enumerate(expect):
        kind = field(p, "kind", f"{where}.expect[{i}]")
        if kind not in kinds:
            raise VectorFormatError(f"{where}.expect[{i}].kind: unknown kind {kind!r}")
        out.add((kind, str(field(p, "path", f"{where}.expect[{i}]"))))
    return out


def _describe(problems: set[tuple[str, str]]) -> str:
    return (
        ", ".join(f"{k} {p!r}" for k, p in sorted(problems, key=lambda x: (x[1], x[0]))) or "none"
    )


def run(doc: dict[str, Any], path: str) -> tuple[int, list[str]]:
    caps = field(doc, "caps", path)
    if caps != CAPS:
        raise VectorFormatError(f"{path}: caps {caps} differ from this runner's {CAPS}")
    raw_cases = field(doc, "cases", path)
    if not isinstance(raw_cases, list):
        raise VectorFormatError(f"{path}: 'cases' must be a list")
    failures = []
    for i, raw in enumerate(raw_cases):
        at = f"{path}: cases[{i}]"
        name = name_of(raw, at)
        where = f"{at} ({name!r})"
        want = _expected(raw, where)
        with tempfile.TemporaryDirectory(prefix="trt-edge-layout-") as scratch:
            bundle = Path(scratch) / "bundle"
            bundle.mkdir()
            for j, node in enumerate(raw.get("outside", [])):
                make_node(Path(scratch), node, f"{where}.outside[{j}]")
            for j, node in enumerate(field(raw, "tree", where)):
                make_node(bundle, node, f"{where}.tree[{j}]")
            got = {(p.kind.value, p.path) for p in bundle_integrity.layout_problems(bundle)}
        if got != want:
            failures.append(f"FAIL {name}: expected {_describe(want)}, got {_describe(got)}")
    return len(raw_cases), failures
