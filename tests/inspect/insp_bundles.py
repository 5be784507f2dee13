"""Write bundle directories and tars around real `.pte` files, the way bundle.json says.

The session fixtures `tiny_llm_bundle` and `vision_bundle` come from the real pipeline;
this helper lets the inspect tests make many small variants (tampered, unlisted files,
inconsistent delegates) cheaply from one real `.pte`.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tarfile
from pathlib import Path
from typing import Any

from trt_edge_runner.bundle_format import (
    SCHEMA_VERSION,
    BundleManifest,
    DelegateInfo,
    DimRange,
    FileEntry,
    Profile,
    RuntimePolicy,
    TensorSpec,
)

IDS = TensorSpec(name="ids", dtype="int64", shape=(1, "seq"), values=(0, 64))
OUT = TensorSpec(name="logits", dtype="float32", shape=(1, "seq", 16))
PROFILES = (
    Profile(name="decode", dims={"seq": DimRange(1, 1, 1)}),
    Profile(name="prefill", dims={"seq": DimRange(2, 32, 128)}),
)


def _entry(path: Path) -> FileEntry:
    return FileEntry(sha256=hashlib.sha256(path.read_bytes()).hexdigest(), size=path.stat().st_size)


def make_bundle(
    pte: Path,
    out: Path,
    *,
    delegates: tuple[DelegateInfo, ...] = (),
    provenance: dict[str, Any] | None = None,
    version: str = "1.0.0",
    profiles: tuple[Profile, ...] = PROFILES,
    phases: dict[str, int | str] | None = None,
) -> Path:
    out.mkdir(parents=True)
    shutil.copyfile(pte, out / "model.pte")
    (out / "reports").mkdir()
    (out / "reports" / "validation.json").write_text(json.dumps({"ok": True, "phases": 2}))
    manifest = BundleManifest(
        schema_version=SCHEMA_VERSION,
        name="tiny",
        version=version,
        backend="xnnpack",
        target={"id": "cpu-x86_64", "arch": "x86_64", "tensorrt": None, "backend": "xnnpack"},
        method="forward",
        inputs=(IDS,),
        outputs=(OUT,),
        profiles=profiles,
        runtime=RuntimePolicy(policy="pinned", phases=phases or {"decode": 0, "prefill": 1}),
        files={
            "model.pte": _entry(out / "model.pte"),
            "reports/validation.json": _entry(out / "reports" / "validation.json"),
        },
        delegates=delegates,
        provenance=provenance or {"source_date_epoch": 0, "executorch": "1.5.1"},
    )
    (out / "bundle.json").write_bytes(manifest.to_canonical_json())
    return out


def tar_bundle(bundle: Path, dest: Path, mode: str = "w") -> Path:
    with tarfile.open(dest, mode) as tar:
        tar.add(bundle, arcname=bundle.name)
    return dest
