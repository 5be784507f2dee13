"""What changed between two artifacts (`trt-edge diff A B`).

Both sides are inspected (report.py) and projected onto what a person shipping a model
cares about — methods and their I/O shapes, delegates and their blobs, sizes, and for
bundles the profiles, policy, target, files and provenance — keyed by name rather than
position where names exist, so a reordered file list is not a change but a method whose
input upper bound moved from 128 to 256 is. A `.pte` can be compared with a bundle: the
bundle's `model.pte` is used, and the result carries a `note` saying so (the bundle-only
parts — profiles, policy, target, files — are not compared, and "no differences" must not
read as "the same artifact").
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Literal

from trt_edge.inspect.report import inspect_path

ChangeKind = Literal["added", "removed", "changed"]
_MISSING = object()


@dataclass(frozen=True)
class Change:
    kind: ChangeKind
    path: str
    before: Any = None
    after: Any = None

    @property
    def section(self) -> str:
        return self.path.split(".", 1)[0]

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "path": self.path, "before": self.before, "after": self.after}


@dataclass(frozen=True)
class DiffResult:
    a: str
    b: str
    compared: Literal["pte", "bundle"]
    changes: tuple[Change, ...]
    note: str | None = None

    @property
    def identical(self) -> bool:
        return not self.changes

    def to_dict(self) -> dict[str, Any]:
        return {
            "a": self.a,
            "b": self.b,
            "compared": self.compared,
            "identical": self.identical,
            "changes": [c.to_dict() for c in self.changes],
            "note": self.note,
        }


def _pte_view(doc: dict[str, Any]) -> dict[str, Any]:
    methods: dict[str, Any] = {}
    delegates: dict[str, Any] = {}
    for m in doc["methods"]:
        methods[m["name"]] = {
            "inputs": m["inputs"],
            "outputs": m["outputs"],
            "planned_bytes": m["planned_bytes"],
            "operators": sorted(m["operators"]),
            "instructions": m["instructions"],
        }
        for d in m["delegates"]:
            entry: dict[str, Any] = {
                "backend_id": d["backend_id"],
                "location": d["location"],
                "blob_size": d["blob_size"],
            }
            if "tensorrt" in d:
                t = d["tensorrt"]
                entry["tensorrt"] = {
                    "magic": t["magic"],
                    "engine_size": t["engine_size"],
                    "metadata": t["metadata"],
                }
            delegates[f"{m['name']}[{d['index']}]"] = entry
    return {
        "methods": methods,
        "delegates": delegates,
        "sizes": {
            "file_size": doc["file_size"],
            "program_size": doc["program_size"],
            "constant_tensors": doc["constant_tensors"],
            "constant_bytes": doc["constant_bytes"],
            "named_data_bytes": doc["named_data_bytes"],
            "mutable_bytes": doc["mutable_bytes"],
        },
    }


def _bundle_view(doc: dict[str, Any]) -> dict[str, Any]:
    view = _pte_view(doc["pte"]) if doc.get("pte") else {}
    view.update(
        {
            "model": doc["model"],
            "backend": doc["backend"],
            "target": doc["target"],
            "io": doc["io"],
            "profiles": {
                f"{p['index']}:{p['name']}": {"dims": p["dims"], "bounds": p.get("bounds")}
                for p in doc["profiles"]
            },
            "policy": doc["runtime"],
            "profile_signatures": {
                f"{d['method']}[{d['index']}]": d.get("profile_signature") for d in doc["delegates"]
            },
            # What the TensorRT builder was given and reported, per engine (bundle.json).
            "engines": {
                f"{d['method']}[{d['index']}]": d["engine"]
                for d in doc["delegates"]
                if d.get("engine")
            },
            "files": {
                f["name"]: {"sha256": f["expected_sha256"], "size": f["expected_size"]}
                for f in doc["files"]
            },
            "provenance": doc["provenance"],
        }
    )
    return view


def _walk(path: str, a: Any, b: Any, out: list[Change]) -> None:
    if a is _MISSING:
        out.append(Change("added", path, None, b))
    elif b is _MISSING:
        out.append(Change("removed", path, a, None))
    elif isinstance(a, dict) and isinstance(b, dict):
        for key in list(a) + [k for k in b if k not in a]:
            child = f"{path}.{key}" if path else str(key)
            _walk(child, a.get(key, _MISSING), b.get(key, _MISSING), out)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b) and a != b:
        if all(isinstance(x, dict) for x in a + b):
            for i, (x, y) in enumerate(zip(a, b, strict=True)):
                _walk(f"{path}[{i}]", x, y, out)
        else:
            out.append(Change("changed", path, a, b))
    elif a != b:
        out.append(Change("changed", path, a, b))


def diff_docs(a: dict[str, Any], b: dict[str, Any]) -> tuple[str, list[Change]]:
    """Changes from inspect document `a` to `b` (what `diff_paths` reports)."""
    both_bundles = a.get("kind") == "bundle" and b.get("kind") == "bundle"
    if both_bundles:
        va, vb = _bundle_view(a), _bundle_view(b)
        compared = "bundle"
    else:
        pa = a["pte"] if a.get("kind") == "bundle" else a
        pb = b["pte"] if b.get("kind") == "bundle" else b
        va = _pte_view(pa) if pa else {}
        vb = _pte_view(pb) if pb else {}
        compared = "pte"
    changes: list[Change] = []
    _walk("", va, vb, changes)
    return compared, changes


def diff_paths(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> DiffResult:
    """Inspect both artifacts and list what changed (raises `InspectError` if unreadable)."""
    doc_a = inspect_path(a).doc
    doc_b = inspect_path(b).doc
    compared, changes = diff_docs(doc_a, doc_b)
    return DiffResult(
        a=str(a),
        b=str(b),
        compared="bundle" if compared == "bundle" else "pte",
        changes=tuple(changes),
        note=_mixed_kinds_note(str(a), doc_a, str(b), doc_b),
    )


def _mixed_kinds_note(a: str, doc_a: dict[str, Any], b: str, doc_b: dict[str, Any]) -> str | None:
    """What a bundle-vs-`.pte` comparison did and did not compare (None for same kinds)."""
    kinds = (doc_a.get("kind"), doc_b.get("kind"))
    if kinds[0] == kinds[1]:
        return None
    bundle, pte = (a, b) if kinds[0] == "bundle" else (b, a)
    return (
        f"{bundle} is a bundle and {pte} a .pte: only the bundle's model.pte was compared "
        "with it; the bundle's profiles, policy, target, files and provenance were not "
        "(pass two bundles to compare those)"
    )
