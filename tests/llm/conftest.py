"""Session fixtures for the LLM tests: mini folders and their bundles, each made once.

`tests.helpers.session_builds.build_once` makes each folder and bundle once for all
pytest-xdist workers. Builds go through the real pipeline into the
persistent test stage cache (`tests.helpers.session_builds.fixture_cache_dir`), so an unchanged
checkout does not re-export or re-lower between sessions. Tests mark themselves
with `xdist_group("llm-<arch>")` so one worker builds one architecture while the
other builds another. The bundles are shared: copy one before editing it.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.fixtures_bundles import SOURCE_DATE_EPOCH
from tests.helpers.session_builds import build_once, fixture_cache_dir, shared_root
from tests.llm.llm_folders import (
    copy_example,
    example_writer,
    manifest_text,
    slots_manifest_text,
    write_project,
)

# The cache of the attention-mode bundles (`cache_bundle`): filled windows 64, 128, 160 (the cap).
CACHE_SLOTS = 160


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
def llm_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return shared_root(tmp_path_factory)


@pytest.fixture(scope="session")
def mini_project(llm_root: Path) -> Callable[[str], Path]:
    """`mini_project(arch)`: the manifest of that architecture's mini (folder written once)."""

    def project(arch: str) -> Path:
        return build_once(llm_root, f"{arch}-folder", lambda work: write_project(work, arch))

    return project


@pytest.fixture(scope="session")
def mini_bundle(llm_root: Path, mini_project: Callable[[str], Path]) -> Callable[[str], Path]:
    """`mini_bundle(arch)`: the mini's validated bundle (built once per session)."""

    def bundle(arch: str) -> Path:
        manifest = mini_project(arch)
        return build_once(
            llm_root, f"{arch}-bundle", lambda work: build_bundle(manifest, work / "out")
        )

    return bundle


@pytest.fixture(scope="session")
def cache_bundle(
    llm_root: Path, mini_project: Callable[[str], Path]
) -> Callable[[str, str], tuple[Path, Path]]:
    """`cache_bundle(arch, attention)`: (the mini's bundle with a CACHE_SLOTS-slot cache built with
    that `attention`, the mini's folder), built once per session."""

    def bundle(arch: str, attention: str) -> tuple[Path, Path]:
        folder = mini_project(arch).parent / "folder"

        def make(work: Path) -> Path:
            text = manifest_text(arch, max_cache_len=CACHE_SLOTS).replace(
                f"{{path: ./folder, max_cache_len: {CACHE_SLOTS}}}",
                f"{{path: {folder}, max_cache_len: {CACHE_SLOTS}, attention: {attention}}}",
            )
            assert f"attention: {attention}" in text
            manifest = work / "manifest.yaml"
            manifest.write_text(text, encoding="utf-8")
            return build_bundle(manifest, work / "out")

        return build_once(llm_root, f"{arch}-{attention}-bundle", make), folder

    return bundle


@pytest.fixture(scope="session")
def slots_bundle(llm_root: Path, mini_project: Callable[[str], Path]) -> Callable[..., Path]:
    """`slots_bundle(arch, quantize=None)`: the mini built with `runtime.slots`
    (`llm_folders.SLOTS` conversations, llm section version 3), built once per session."""

    def bundle(arch: str, quantize: str | None = None) -> Path:
        folder = mini_project(arch).parent / "folder"

        def make(work: Path) -> Path:
            manifest = work / "manifest.yaml"
            manifest.write_text(slots_manifest_text(arch, folder, quantize), encoding="utf-8")
            return build_bundle(manifest, work / "out")

        key = f"{arch}-slots-bundle" + ("-quantized" if quantize else "")
        return build_once(llm_root, key, make)

    return bundle


@pytest.fixture(scope="session")
def gemma3_example(llm_root: Path) -> Path:
    """A copy of examples/gemma3 with its folder written by its own script (the seed)."""

    def make(work: Path) -> Path:
        from trt_edge.library_noise import quiet_library_noise

        root: Path = copy_example(work / "gemma3-example")
        writer: Any = example_writer()
        with quiet_library_noise():
            writer.write_folder(root / "mini-gemma3", writer.seed_config())
        return root / "manifest.yaml"

    return build_once(llm_root, "gemma3-example-folder", make)


@pytest.fixture(scope="session")
def gemma3_example_bundle(llm_root: Path, gemma3_example: Path) -> Path:
    """The example's bundle (the seed's mini Gemma-3, max_cache_len 512), built once."""
    return build_once(
        llm_root,
        "gemma3-example-bundle",
        lambda work: build_bundle(gemma3_example, work / "dist"),
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
