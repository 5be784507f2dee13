"""Session fixtures that build the example bundles with the real pipeline.

`tiny_llm_bundle` and `vision_bundle` are bundle directories built by
`trt_edge.pipeline.run.build` from `examples/*/manifest.yaml` — real `.pte`
files, validated with the real ExecuTorch runtime. They are built once per
test session: under pytest-xdist the workers share one directory (the parent
of their base temp dirs) and take a file lock, so the first worker builds and
the others reuse its bundle. Stage outputs go to a persistent cache
(`$TRT_EDGE_TEST_CACHE`, default `~/.cache/trt-edge/tests`), keyed by content,
so an unchanged checkout does not re-lower between sessions.

The bundles are shared: treat them as read-only. A test that edits files must
copy the directory first (`shutil.copytree(bundle, tmp_path / "b")`).
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"
SOURCE_DATE_EPOCH = 1_780_000_000  # fixed, so the fixture bundles are reproducible


def fixture_cache_dir() -> Path:
    env = os.environ.get("TRT_EDGE_TEST_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "trt-edge" / "tests"


def _shared_root(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Path:
    base = tmp_path_factory.getbasetemp()
    root = base.parent if worker_id != "master" else base
    shared = root / "trt-edge-bundles"
    shared.mkdir(exist_ok=True)
    return shared


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    with open(path, "a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def build_example(example: str, root: Path, target: str | None = None) -> Path:
    """Build `examples/<example>` into `root` once (under a lock) and return the bundle dir.

    `target` (a catalog id among the manifest's build.targets; default its first) builds
    into its own folder: the stage cache shares export, lowering and validation between
    targets whose program is the same (every CPU target: an XNNPACK .pte is arch-free).
    """
    from trt_edge.pipeline.run import BuildOptions, build

    name = example if target is None else f"{example}-{target}"
    marker = root / f"{name}.built"
    with _locked(root / f"{name}.lock"):
        if marker.is_file():
            bundle = Path(marker.read_text(encoding="utf-8"))
            if (bundle / "bundle.json").is_file():
                return bundle
        result = build(
            EXAMPLES / example / "manifest.yaml",
            BuildOptions(
                out_dir=root / ("out" if target is None else f"out-{target}"),
                cache_dir=fixture_cache_dir(),
                source_date_epoch=SOURCE_DATE_EPOCH,
                target=target,
            ),
        )
        marker.write_text(str(result.bundle_dir), encoding="utf-8")
        return result.bundle_dir


@pytest.fixture(scope="session")
def tiny_llm_manifest() -> Path:
    return EXAMPLES / "tiny_llm" / "manifest.yaml"


@pytest.fixture(scope="session")
def vision_manifest() -> Path:
    return EXAMPLES / "vision" / "manifest.yaml"


@pytest.fixture(scope="session")
def tiny_llm_bundle(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Path:
    """The tiny LLM (profiles decode=0, prefill=1; pinned phases) built for cpu-x86_64."""
    return build_example("tiny_llm", _shared_root(tmp_path_factory, worker_id))


@pytest.fixture(scope="session")
def vision_bundle(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Path:
    """The tiny CNN (batch profiles 1 / 2-8 / 9-32; auto policy) built for cpu-x86_64."""
    return build_example("vision", _shared_root(tmp_path_factory, worker_id))
