"""Real `.pte` files shared by the inspect tests (built once per session: lowering is slow)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.session_builds import build_once, shared_root
from tests.inspect.pte_builders import (
    TinyDecoder,
    export_methods,
    synthesize_tensorrt_pte,
    write_pte,
)
from tests.inspect.upstream_trt import sample_blob


@pytest.fixture(scope="session")
def pte_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return shared_root(tmp_path_factory)


def decoder_pte(root: Path, name: str, methods: dict[str, tuple[int, int]], backend: str) -> Path:
    """`TinyDecoder` exported per method (`methods[name] = (min_seq, max_seq)`) and lowered
    for `backend`, once per session."""

    def build(out: Path) -> Path:
        programs = export_methods(TinyDecoder.module(), methods)
        return write_pte(programs, out / f"{name}.pte", backend)

    return build_once(root, f"inspect-{name}", build)


@pytest.fixture(scope="session")
def xnnpack_pte(pte_root: Path) -> Path:
    """forward(ids[1, 1..128]) lowered to XNNPACK (embedding stays on the portable path)."""
    return decoder_pte(pte_root, "xnnpack", {"forward": (1, 128)}, "xnnpack")


@pytest.fixture(scope="session")
def portable_pte(pte_root: Path) -> Path:
    """The same model without delegates: every constant lives in the constant segment."""
    return decoder_pte(pte_root, "portable", {"forward": (1, 128)}, "portable")


@pytest.fixture(scope="session")
def two_method_pte(pte_root: Path) -> Path:
    """prefill(ids[1, 2..64]) and decode(ids[1, 1]) in one XNNPACK program."""
    return decoder_pte(pte_root, "two_method", {"prefill": (2, 64), "decode": (1, 1)}, "xnnpack")


@pytest.fixture(scope="session")
def tensorrt_pte(two_method_pte: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """SYNTHETIC: two_method_pte with TensorRTBackend delegates holding TR01/TR02 blobs
    around placeholder engine bytes, stored as segments."""
    blobs = [sample_blob(300, seed=1), sample_blob(200, aliased=True, seed=2)]
    dest = tmp_path_factory.mktemp("inspect-trt") / "synthetic_trt.pte"
    return synthesize_tensorrt_pte(two_method_pte, dest, blobs)


@pytest.fixture(scope="session")
def tensorrt_inline_pte(two_method_pte: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """SYNTHETIC: as `tensorrt_pte`, but the blobs stay inline in the FlatBuffer."""
    blobs = [sample_blob(96, seed=3)]
    dest = tmp_path_factory.mktemp("inspect-trt-inline") / "synthetic_trt_inline.pte"
    return synthesize_tensorrt_pte(two_method_pte, dest, blobs, inline=True)
