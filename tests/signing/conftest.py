"""Fixtures for the signing tests: a key pair made by `trt-edge keys generate` and a small
real bundle (`tests.helpers.bundles`: the session's tiny `.pte`, a bundle.json written by
the build's bundle stage and a validation report)."""

from __future__ import annotations

from pathlib import Path

import pytest
from trt_edge.cli.main import main

from tests.helpers.bundles import write_bundle


@pytest.fixture
def keys(tmp_path: Path) -> Path:
    assert main(["keys", "generate", str(tmp_path / "keys")]) == 0
    return tmp_path / "keys"


@pytest.fixture
def bundle(tmp_path: Path, tiny_pte: Path) -> Path:
    return write_bundle(tmp_path / "tiny-1.0.0", tiny_pte, version="1.0.0", report=True)


def sign(bundle: Path, keys: Path) -> None:
    assert main(["sign", str(bundle), "--key", str(keys / "trt-edge-signing.key")]) == 0
