"""The transport tar is byte-for-byte reproducible and holds exactly the bundle."""

from __future__ import annotations

import json
import os
import tarfile
from pathlib import Path

import pytest
from trt_edge.pipeline.bundle_tar import write_bundle_tar


def _bundle(root: Path) -> Path:
    bundle = root / "demo-1.0.0"
    (bundle / "reports").mkdir(parents=True)
    (bundle / "model.pte").write_bytes(b"\x00program bytes")
    (bundle / "reports" / "validation.json").write_text('{"ok":true}\n')
    (bundle / "bundle.json").write_text(json.dumps({"provenance": {"source_date_epoch": 1234}}))
    return bundle


def test_same_bundle_gives_the_same_bytes_whatever_the_file_metadata(tmp_path: Path) -> None:
    bundle = _bundle(tmp_path)
    first = write_bundle_tar(bundle, tmp_path / "a.tar").read_bytes()
    os.utime(bundle / "model.pte", (99, 99))
    os.chmod(bundle / "model.pte", 0o600)
    second = write_bundle_tar(bundle, tmp_path / "b.tar").read_bytes()
    assert first == second


def test_entries_are_sorted_owned_by_root_and_dated_to_the_source_date(tmp_path: Path) -> None:
    tar_path = write_bundle_tar(_bundle(tmp_path), tmp_path / "out" / "demo.tar")
    with tarfile.open(tar_path) as tar:
        members = tar.getmembers()
        assert [m.name for m in members] == [
            "demo-1.0.0",
            "demo-1.0.0/bundle.json",
            "demo-1.0.0/model.pte",
            "demo-1.0.0/reports",
            "demo-1.0.0/reports/validation.json",
        ]
        assert {(m.uid, m.gid, m.uname, m.gname, m.mtime) for m in members} == {
            (0, 0, "", "", 1234)
        }
        extracted = tar.extractfile("demo-1.0.0/model.pte")
        assert extracted is not None and extracted.read() == b"\x00program bytes"
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["demo.tar"]  # no temp left


def test_a_directory_without_bundle_json_is_refused(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="not a bundle"):
        write_bundle_tar(tmp_path, tmp_path / "x.tar")
