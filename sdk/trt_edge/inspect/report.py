"""What `trt-edge inspect` reports: one JSON-able document per artifact, plus its failed checks.

`inspect_path` turns a `.pte`, a bundle directory or a bundle `.tar` into a `Report`:
`doc` (stable keys; `--json` prints it, `trt-edge diff` compares two of them) and
`problems` (checks that failed: a hash mismatch, a file missing or not covered by
`bundle.json`, a malformed TensorRT blob, delegates that disagree on profile indices,
`bundle.json` not describing the `.pte` it ships with). Readers raise `InspectError`
only when the artifact cannot be read at all.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trt_edge_runner.bundle_format import BundleManifest
from trt_edge_runner.durable import write_atomic, write_atomic_chunks

from trt_edge.inspect.bundle import OpenBundle, is_bundle_path, open_bundle
from trt_edge.inspect.errors import InspectError, ProfileSignatureError, TrtBlobError
from trt_edge.inspect.pte_reader import PteFile
from trt_edge.inspect.signatures import check_profile_signatures
from trt_edge.inspect.trt_blob import engine_view, is_tensorrt_backend, parse_trt_blob


@dataclass
class Report:
    doc: dict[str, Any]
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def describe_pte(pte: PteFile) -> Report:
    """The `.pte` document, with every TensorRT delegate's blob header and metadata parsed."""
    doc = pte.info.to_dict()
    problems: list[str] = []
    by_key = {(d.method, d.index): d for d in pte.info.delegates}
    for method in doc["methods"]:
        for d in method["delegates"]:
            if not is_tensorrt_backend(d["backend_id"]):
                continue
            entry = by_key[(d["method"], d["index"])]
            source = f"{pte.label}: method {entry.method!r} delegate {entry.index}"
            view = pte.delegate_blob(entry)
            try:
                d["tensorrt"] = parse_trt_blob(view, source=source).to_dict()
            except TrtBlobError as exc:
                d["tensorrt_error"] = str(exc)
                problems.append(str(exc))
            finally:
                view.release()
    return Report(doc=doc, problems=problems)


def _bundle_doc(bundle: OpenBundle) -> Report:
    m: BundleManifest = bundle.manifest
    raw = bundle.raw
    problems: list[str] = []
    # The bundle integrity rule's findings, worded as every front end words them.
    for problem in bundle.problems:
        problems.append(f"{bundle.path}: {problem}")
    if bundle.problems:
        problems.append(
            f"{bundle.path}: a device refuses this bundle ({len(bundle.problems)} integrity "
            "problem(s) above): re-copy it, or rebuild (and re-sign) it"
        )
    signatures = "ok"
    try:
        check_profile_signatures(m.delegates)
    except ProfileSignatureError as exc:
        signatures = str(exc)
        problems.append(f"{bundle.path}: {exc}")
    pte_report: Report | None = None
    if bundle.pte_error is not None:
        problems.append(bundle.pte_error)
    if bundle.pte is not None:
        pte_report = describe_pte(bundle.pte)
        problems.extend(pte_report.problems)
        actual = {(d.method, d.index): d for d in bundle.pte.info.delegates}
        for d in m.delegates:
            found = actual.get((d.method, d.index))
            if found is None or found.backend_id != d.backend_id or found.blob_size != d.blob_size:
                seen = (
                    f"{found.backend_id}, {found.blob_size} bytes" if found else "no such delegate"
                )
                problems.append(
                    f"{bundle.path}: bundle.json lists delegate {d.index} of method {d.method!r} "
                    f"as {d.backend_id}, {d.blob_size} bytes; model.pte has: {seen}"
                )
    doc = {
        "kind": "bundle",
        "path": str(bundle.path),
        "container": bundle.kind,
        "schema_version": m.schema_version,
        "model": {"name": m.name, "version": m.version},
        "backend": m.backend,
        "target": m.target,
        "quantization": m.quantization,  # None: weights as trained (fp32)
        "io": raw.get("io", {}),
        "profiles": raw.get("profiles", []),
        "export_domain": {s: list(r) for s, r in m.symbols().items()},
        "runtime": raw.get("runtime", {}),
        "memory": m.memory.to_dict() if m.memory is not None else None,
        "delegates": raw.get("delegates", []),
        "profile_signatures": signatures,
        "provenance": m.provenance,
        "files": [c.to_dict() for c in bundle.files],
        "hashes_ok": bundle.hashes_ok,
        "unlisted_files": bundle.unlisted,
        "integrity": [
            {"kind": p.kind.value, "path": p.path, "detail": p.detail} for p in bundle.problems
        ],
        "signature": {
            "present": bundle.signature_present,
            "verified": None,
            "note": "verify the ed25519 signature with `trt-edge verify`",
        },
        "validation": bundle.validation,
        "pte": pte_report.doc if pte_report is not None else None,
        "pte_error": bundle.pte_error,
    }
    return Report(doc=doc, problems=problems)


def inspect_path(path: str | os.PathLike[str]) -> Report:
    """Inspect a `.pte`, bundle directory or bundle `.tar` (chosen by what `path` is)."""
    target = Path(path)
    if is_bundle_path(target):
        with open_bundle(target) as bundle:
            return _bundle_doc(bundle)
    with PteFile(target) as pte:
        return describe_pte(pte)


_UNSAFE_STEM_CHARS = re.compile(r"[^A-Za-z0-9_.-]")


def safe_stem(method: str, index: int) -> str:
    """The file stem for one delegate's extracted files: `<method>-<index>`, made safe.

    The method name comes from the `.pte` (untrusted input): a name like `../evil` or
    `a/b` would otherwise steer the write outside the output directory. Every character
    other than letters, digits, `_`, `.` and `-` (so `/`, `\\`, NUL, spaces) becomes `_`,
    runs of dots become `_` (no `..`), and a leading dot is replaced so nothing is hidden.
    The original name is kept in the `.json` written beside the engine.
    """
    name = _UNSAFE_STEM_CHARS.sub("_", method)
    name = re.sub(r"\.{2,}", "_", name)
    if not name or name.startswith("."):
        name = "_" + name.lstrip(".")
    return f"{name}-{index}"


def _inside(out_dir: Path, name: str, source: str) -> Path:
    """`out_dir / name`, refusing anything that resolves outside `out_dir` (belt and braces
    behind `safe_stem`: symlinks in `out_dir` pointing elsewhere are refused too)."""
    root = out_dir.resolve()
    dest = (out_dir / name).resolve()
    if dest.parent != root:
        raise InspectError(
            f"{source}: refusing to write {name!r}: it resolves to {dest}, outside "
            f"--extract-engines directory {root}; remove the symlink or pick another directory"
        )
    return out_dir / name


def _extract_from(pte: PteFile, out_dir: Path) -> list[Path]:
    written: list[Path] = []
    for d in pte.info.delegates:
        if not is_tensorrt_backend(d.backend_id):
            continue
        source = f"{pte.label}: method {d.method!r} delegate {d.index}"
        view = pte.delegate_blob(d)
        try:
            blob = parse_trt_blob(view, source=source)
            stem = safe_stem(d.method, d.index)
            engine = _inside(out_dir, f"{stem}.engine", source)
            meta = _inside(out_dir, f"{stem}.json", source)
            if engine in written:
                raise InspectError(
                    f"{source}: its extracted file name {engine.name!r} collides with an "
                    "earlier delegate's (method names differing only in characters that are "
                    "unsafe in file names); extract into an empty directory per method"
                )
            eng = engine_view(view, blob)
            try:
                write_atomic_chunks(engine, [eng])
            finally:
                eng.release()
            doc = {"source": source, "delegate": d.to_dict(), "blob": blob.to_dict()}
            text = (json.dumps(doc, indent=2, sort_keys=True) + "\n").encode()
            write_atomic(meta, text)
            written += [engine, meta]
        finally:
            view.release()
    return written


def extract_engines(path: str | os.PathLike[str], out_dir: str | os.PathLike[str]) -> list[Path]:
    """Write each TensorRT delegate's engine bytes (`<method>-<index>.engine`) and its blob
    header/metadata (`.json`) into `out_dir`, atomically. Returns the files written.

    The bytes are whatever the blob carries; nothing here checks that they are a real
    engine (only TensorRT can) — synthetic test files carry labelled placeholders.
    """
    target = Path(path)
    dest = Path(out_dir)
    dest.mkdir(parents=True, exist_ok=True)
    if is_bundle_path(target):
        with open_bundle(target) as bundle:
            return [] if bundle.pte is None else _extract_from(bundle.pte, dest)
    with PteFile(target) as pte:
        return _extract_from(pte, dest)
