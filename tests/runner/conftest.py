"""Fixtures for the runner tests: tiny real bundles (`tests.helpers.bundles`) and the C++
dtype-table check. The C++ runner binary (`trt_edge_run`) is a session fixture of
`tests.helpers.fixtures_runner` (every area uses it)."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Unpack

import pytest
from trt_edge_runner.bundle_format import PhaseTarget

from tests.helpers.bundles import (
    LLM_PHASES,
    LLM_PROFILES,
    SEQ_MAX,
    BundleMaker,
    BundleOptions,
    ProfileSpec,
    write_bundle,
)


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


@pytest.fixture
def make_bundle(tmp_path: Path, tiny_pte: Path) -> BundleMaker:
    """`write_bundle` around the tiny program, into a fresh directory per call."""
    counter = iter(range(1000))

    def make(
        profiles: Sequence[ProfileSpec] = LLM_PROFILES,
        phases: Mapping[str, PhaseTarget] = LLM_PHASES,
        **options: Unpack[BundleOptions],
    ) -> Path:
        out = tmp_path / f"bundle-{next(counter)}"
        return write_bundle(out, tiny_pte, profiles, phases, **options)

    return make


@pytest.fixture
def llm_like_bundle(make_bundle: BundleMaker) -> Path:
    """Profile 0 decode (seq 1), profile 1 prefill (seq 2..64); pinned phases."""
    return make_bundle(LLM_PROFILES, LLM_PHASES)


@pytest.fixture
def overlapping_bundle(make_bundle: BundleMaker) -> Path:
    """Profiles that overlap on seq 8..16: auto must stay sticky there."""
    return make_bundle(
        [("short", 1, 4, 16), ("long", 8, 32, SEQ_MAX)],
        {"any": "auto", "short": 0, "long": 1},
        policy="auto",
    )
