"""Fixtures for the signing tests: a key pair made by `trt-edge keys generate` and a small
bundle written by hand with `BundleManifest` (the signature covers bytes, not what they
mean, so these tests need no model build)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from trt_edge.cli.main import main
from trt_edge_runner.bundle_format import (
    SCHEMA_VERSION,
    BundleManifest,
    DimRange,
    FileEntry,
    Profile,
    RuntimePolicy,
    TensorSpec,
)


def write_bundle(directory: Path, files: dict[str, bytes]) -> Path:
    directory.mkdir(parents=True)
    entries = {}
    for rel, data in files.items():
        path = directory / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        entries[rel] = FileEntry(sha256=hashlib.sha256(data).hexdigest(), size=len(data))
    manifest = BundleManifest(
        schema_version=SCHEMA_VERSION,
        name="tiny",
        version="1.0.0",
        backend="xnnpack",
        target={"id": "cpu-x86_64", "arch": "x86_64"},
        method="forward",
        inputs=(TensorSpec("x", "float32", (1, "n")),),
        outputs=(TensorSpec("y", "float32", (1, "n")),),
        profiles=(Profile("p0", {"n": DimRange(1, 4, 8)}),),
        runtime=RuntimePolicy("pinned", {"run": 0}),
        files=entries,
    )
    (directory / "bundle.json").write_bytes(manifest.to_canonical_json())
    return directory


@pytest.fixture
def keys(tmp_path: Path) -> Path:
    assert main(["keys", "generate", str(tmp_path / "keys")]) == 0
    return tmp_path / "keys"


@pytest.fixture
def bundle(tmp_path: Path) -> Path:
    return write_bundle(
        tmp_path / "tiny-1.0.0",
        {"model.pte": b"\x00PTE" * 100, "reports/validation.json": b'{"ok": true}\n'},
    )


def sign(bundle: Path, keys: Path) -> None:
    assert main(["sign", str(bundle), "--key", str(keys / "trt-edge-signing.key")]) == 0
