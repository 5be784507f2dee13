"""Real `.pte` files shared by the inspect tests (built once per session: lowering is slow)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# Helper modules beside this file (tests/ is on the path, tests/inspect is not, and a
# package named `inspect` would shadow the standard library).
sys.path.insert(0, str(Path(__file__).parent))
from insp_pte_builders import TinyDecoder, export_methods, synthesize_tensorrt_pte, write_pte
from insp_upstream_trt import sample_blob


@pytest.fixture(scope="session")
def pte_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("inspect_pte")


@pytest.fixture(scope="session")
def xnnpack_pte(pte_dir: Path) -> Path:
    """forward(ids[1, 1..128]) lowered to XNNPACK (embedding stays on the portable path)."""
    programs = export_methods(TinyDecoder.module(), {"forward": (1, 128)})
    return write_pte(programs, pte_dir / "xnnpack.pte", "xnnpack")


@pytest.fixture(scope="session")
def portable_pte(pte_dir: Path) -> Path:
    """The same model without delegates: every constant lives in the constant segment."""
    programs = export_methods(TinyDecoder.module(), {"forward": (1, 128)})
    return write_pte(programs, pte_dir / "portable.pte", "portable")


@pytest.fixture(scope="session")
def two_method_pte(pte_dir: Path) -> Path:
    """prefill(ids[1, 2..64]) and decode(ids[1, 1]) in one XNNPACK program."""
    programs = export_methods(TinyDecoder.module(), {"prefill": (2, 64), "decode": (1, 1)})
    return write_pte(programs, pte_dir / "two_method.pte", "xnnpack")


@pytest.fixture(scope="session")
def tensorrt_pte(two_method_pte: Path, pte_dir: Path) -> Path:
    """SYNTHETIC: two_method_pte with TensorRTBackend delegates holding TR01/TR02 blobs
    around placeholder engine bytes, stored as segments."""
    blobs = [sample_blob(300, seed=1), sample_blob(200, aliased=True, seed=2)]
    return synthesize_tensorrt_pte(two_method_pte, pte_dir / "synthetic_trt.pte", blobs)


@pytest.fixture(scope="session")
def tensorrt_inline_pte(two_method_pte: Path, pte_dir: Path) -> Path:
    """SYNTHETIC: as `tensorrt_pte`, but the blobs stay inline in the FlatBuffer."""
    blobs = [sample_blob(96, seed=3)]
    return synthesize_tensorrt_pte(
        two_method_pte, pte_dir / "synthetic_trt_inline.pte", blobs, inline=True
    )
