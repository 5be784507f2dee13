"""Fixtures for the runner tests: tiny real bundles (see tiny_bundles.py). The C++ runner
binary (`trt_edge_run`) is a session fixture of `fixtures_runner` (every area uses it)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from runner.tiny_bundles import (  # type: ignore[import-not-found]
    SEQ_MAX,
    BundleMaker,
    build_tiny_model,
    lower_tiny_model,
    write_bundle,
)
from trt_edge_runner.bundle_format import PhaseTarget


@pytest.fixture(scope="session")
def trt_edge_dtype_conformance(trt_edge_run: Path) -> Path:
    """The C++ dtype-table check, built in the same build tree as `trt_edge_run`."""
    build = trt_edge_run.parent.parent
    done = subprocess.run(
        ["cmake", "--build", str(build), "--target", "trt_edge_dtype_conformance", "-j", "2"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return build / "trt_edge_dtype_conformance"


@pytest.fixture
def llm_bundle_copy(tiny_llm_bundle: Path, tmp_path: Path) -> Path:
    """A private copy of the session's tiny-LLM example bundle (tests may edit it)."""
    return Path(shutil.copytree(tiny_llm_bundle, tmp_path / tiny_llm_bundle.name))


@pytest.fixture(scope="session")
def tiny_model() -> Any:
    return build_tiny_model()


@pytest.fixture(scope="session")
def tiny_pte(tmp_path_factory: pytest.TempPathFactory, tiny_model: Any) -> Path:
    return lower_tiny_model(tiny_model, tmp_path_factory.mktemp("tiny-pte") / "model.pte")


@pytest.fixture
def make_bundle(tmp_path: Path, tiny_pte: Path) -> BundleMaker:
    counter = iter(range(1000))

    def make(
        profiles: list[tuple[str, int, int, int]],
        phases: dict[str, PhaseTarget],
        **kwargs: Any,
    ) -> Path:
        return write_bundle(
            tmp_path / f"bundle-{next(counter)}", tiny_pte, profiles, phases, **kwargs
        )

    return make


@pytest.fixture
def llm_like_bundle(make_bundle: BundleMaker) -> Path:
    """Profile 0 decode (seq 1), profile 1 prefill (seq 2..64); pinned phases."""
    return make_bundle(
        [("decode", 1, 1, 1), ("prefill", 2, 16, SEQ_MAX)], {"decode": 0, "prefill": 1}
    )


@pytest.fixture
def overlapping_bundle(make_bundle: BundleMaker) -> Path:
    """Profiles that overlap on seq 8..16: auto must stay sticky there."""
    return make_bundle(
        [("short", 1, 4, 16), ("long", 8, 32, SEQ_MAX)],
        {"any": "auto", "short": 0, "long": 1},
        policy="auto",
    )
