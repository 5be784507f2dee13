"""Session fixtures for the LLM tests: mini folders and their bundles, each made once.

Under pytest-xdist the workers share one directory (the parent of their base temp
dirs) and a file lock per artifact, so the first worker to need a folder or bundle
writes it and the others reuse it. Builds go through the real pipeline into the
persistent test stage cache (`fixtures_bundles.fixture_cache_dir`), so an unchanged
checkout does not re-export or re-lower between sessions. Tests mark themselves
with `xdist_group("llm-<arch>")` so one worker builds one architecture while the
other builds another. The bundles are shared: copy one before editing it.
"""

from __future__ import annotations

import fcntl
import logging
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fixtures_bundles import SOURCE_DATE_EPOCH, fixture_cache_dir
from llm.llm_folders import (  # type: ignore[import-not-found]
    copy_example,
    example_writer,
    write_project,
)


def _shared(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Path:
    base = tmp_path_factory.getbasetemp()
    root = (base.parent if worker_id != "master" else base) / "trt-edge-llm"
    root.mkdir(exist_ok=True)
    return root


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    with open(path, "a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _once(root: Path, name: str, make: Callable[[], Path]) -> Path:
    """`make()` under a lock the first time; afterwards the path it returned."""
    marker = root / f"{name}.done"
    with _locked(root / f"{name}.lock"):
        if marker.is_file():
            return Path(marker.read_text(encoding="utf-8"))
        made = make()
        marker.write_text(str(made), encoding="utf-8")
        return made


def build_bundle(manifest: Path, out: Path) -> Path:
    from trt_edge.library_noise import quiet_library_noise
    from trt_edge.pipeline.run import BuildOptions, build

    options = BuildOptions(
        out_dir=out, cache_dir=fixture_cache_dir(), source_date_epoch=SOURCE_DATE_EPOCH
    )
    with quiet_library_noise():
        bundle: Path = build(manifest, options).bundle_dir
    return bundle


@pytest.fixture(scope="session")
def llm_root(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Path:
    return _shared(tmp_path_factory, worker_id)


@pytest.fixture(scope="session")
def mini_project(llm_root: Path) -> Callable[[str], Path]:
    """`mini_project(arch)`: the manifest of that architecture's mini (folder written once)."""

    def project(arch: str) -> Path:
        return _once(llm_root, f"{arch}-folder", lambda: write_project(llm_root / arch, arch))

    return project


@pytest.fixture(scope="session")
def mini_bundle(llm_root: Path, mini_project: Callable[[str], Path]) -> Callable[[str], Path]:
    """`mini_bundle(arch)`: the mini's validated bundle (built once per session)."""

    def bundle(arch: str) -> Path:
        manifest = mini_project(arch)
        return _once(
            llm_root, f"{arch}-bundle", lambda: build_bundle(manifest, manifest.parent / "out")
        )

    return bundle


@pytest.fixture(scope="session")
def gemma3_example(llm_root: Path) -> Path:
    """A copy of examples/gemma3 with its folder written by its own script (the seed)."""

    def make() -> Path:
        from trt_edge.library_noise import quiet_library_noise

        root: Path = copy_example(llm_root / "gemma3-example")
        writer: Any = example_writer()
        with quiet_library_noise():
            writer.write_folder(root / "mini-gemma3", writer.seed_config())
        return root / "manifest.yaml"

    return _once(llm_root, "gemma3-example-folder", make)


@pytest.fixture(scope="session")
def gemma3_example_bundle(llm_root: Path, gemma3_example: Path) -> Path:
    """The example's bundle (the seed's mini Gemma-3, max_cache_len 512), built once."""
    return _once(
        llm_root,
        "gemma3-example-bundle",
        lambda: build_bundle(gemma3_example, gemma3_example.parent / "dist"),
    )


@dataclass(frozen=True)
class CliRun:
    """What one in-process `trt-edge` command did."""

    returncode: int
    stdout: str
    stderr: str


# Loggers the CLI configures for its own process (trt_edge_runner.commands.run): restored
# after each in-process call, so later tests in the same worker see them as they were.
_CLI_LOGGERS = ("torchao", "torch.utils._pytree", "trt_edge_runner")


@pytest.fixture
def trt_edge_cli(capsys: pytest.CaptureFixture[str]) -> Iterator[Callable[..., CliRun]]:
    """`trt_edge_cli("generate", BUNDLE, ...)`: the real CLI shell, in this process (no
    10 s of torch imports per call), its logging set-up undone afterwards."""
    from trt_edge.cli.main import main as host_main

    loggers = [logging.getLogger(name) for name in _CLI_LOGGERS]
    saved = [(lg.level, list(lg.handlers), lg.propagate) for lg in loggers]

    def run(*args: str | Path) -> CliRun:
        capsys.readouterr()
        code = host_main([str(a) for a in args])
        out = capsys.readouterr()
        return CliRun(code, out.out, out.err)

    try:
        yield run
    finally:
        for lg, (level, handlers, propagate) in zip(loggers, saved, strict=True):
            lg.setLevel(level)
            lg.handlers[:] = handlers
            lg.propagate = propagate


os.environ.setdefault("HF_HUB_OFFLINE", "1")  # no test here may reach the hub
