"""`trt-edge build` holds back the known-harmless library noise, shows it with `-v`, and never
hides anything else (a model's own warning, an unknown log line, a native library's line)."""

from __future__ import annotations

import builtins
import logging
import subprocess
import sys
import warnings
from collections.abc import Callable
from pathlib import Path

import pytest
from trt_edge.library_noise import KNOWN_NOISE, quiet_library_noise

from tests.helpers.paths import EXAMPLES
from tests.helpers.session_builds import fixture_cache_dir

WriteProject = Callable[..., Path]

TORCHAO = "Could not load this library"  # torchao's optional kernels (logging, torchao)
PYTREE = "register_constant() on Enum subclasses is deprecated"  # torch's own log handler
LEAFSPEC = "isinstance(treespec, LeafSpec)` is deprecated"  # FutureWarning while lowering


def _build(manifest: Path, out: Path, cache: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    where = ["--out", str(out), "--cache-dir", str(cache)]
    done = subprocess.run(
        [sys.executable, "-m", "trt_edge", "build", str(manifest), "--local", *where, *flags],
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done


def test_known_log_records_and_warnings_are_dropped_and_nothing_else(
    caplog: pytest.LogCaptureFixture,
) -> None:
    torchao = logging.getLogger("torchao")
    # An in-process `trt-edge run` earlier in this worker raises torchao's logger to ERROR
    # (its CLI hides that noise that way); this test is about the filter, so reset it here.
    caplog.set_level(logging.WARNING, logger="torchao")
    so = "/venv/site-packages/torchao/_C_mxfp8.cpython-310-x86_64-linux-gnu.so"
    known = f"Failed to load {so}: Could not load this library: {so}"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with caplog.at_level(logging.WARNING), quiet_library_noise():
            torchao.warning(known)
            torchao.warning("Failed to load the weights")  # torchao, not the known message
            torchao.error(known)  # the known text as an error is not noise
            leafspec = "`isinstance(treespec, LeafSpec)` is deprecated, use"
            warnings.warn(leafspec, FutureWarning, stacklevel=1)
            warnings.warn("something else is deprecated", FutureWarning, stacklevel=1)
    shown = [(r.levelname, r.getMessage()) for r in caplog.records]
    assert shown == [("WARNING", "Failed to load the weights"), ("ERROR", known)]
    assert [str(w.message) for w in caught] == ["something else is deprecated"]
    caplog.clear()
    torchao.warning(known)  # outside the block everything shows again
    assert [r.getMessage() for r in caplog.records] == [known]


def test_every_entry_names_a_real_channel_and_source_and_says_why() -> None:
    for entry in KNOWN_NOISE:
        assert entry.why and entry.pattern
        if entry.channel == "warnings":
            category = getattr(builtins, entry.source, None)
            assert isinstance(category, type) and issubclass(category, Warning), entry.source
        else:
            assert entry.channel == "logging" and entry.source.split(".")[0] in ("torch", "torchao")


# A model whose own build() warns, logs under torchao's logger and writes to fd 2 from "C".
NOISY_BUILD = """
warnings.warn("the model's own warning", UserWarning)
logging.getLogger("torchao").warning("torchao says something new")
os.write(2, b"a native library line\\n")
"""


@pytest.mark.slow
def test_unknown_lines_get_through_while_the_known_noise_is_held_back(
    write_project: WriteProject, linear_model: Callable[..., str], tmp_path: Path
) -> None:
    """A fresh cache: every stage runs, so torch, ExecuTorch and torchao are really imported."""
    noisy = linear_model(
        "return self.linear(x)", build=NOISY_BUILD, imports="import logging, os, warnings"
    )
    manifest = write_project(noisy, backend="xnnpack")
    quiet = _build(manifest, tmp_path / "out", tmp_path / "cache-quiet").stderr
    for line in ("UserWarning: the model's own warning", "torchao says something new"):
        assert line in quiet
    assert "a native library line" in quiet
    for noise in (TORCHAO, PYTREE, LEAFSPEC):
        assert noise not in quiet, noise
    loud = _build(manifest, tmp_path / "out", tmp_path / "cache-loud", "-v").stderr
    for noise in (TORCHAO, PYTREE, LEAFSPEC):
        assert noise in loud, noise
    assert "the model's own warning" in loud and "torchao says something new" in loud


def _cache_reusing_lowered_programs(tmp_path: Path, name: str) -> Path:
    """A cache dir whose export and lower entries are the shared test cache's (warm after the
    first session), with its own empty validate stage: the validate stage then really runs,
    importing the ExecuTorch runtime — and, through it, torchao, where the noise comes from."""
    shared = fixture_cache_dir()
    cache = tmp_path / name
    cache.mkdir()
    for stage in ("export", "lower"):
        (shared / stage).mkdir(parents=True, exist_ok=True)
        (cache / stage).symlink_to(shared / stage, target_is_directory=True)
    return cache


@pytest.mark.slow
@pytest.mark.parametrize("example", ["tiny_llm", "vision"])
def test_building_an_example_prints_no_library_noise_unless_verbose(
    example: str, tmp_path: Path
) -> None:
    manifest = EXAMPLES / example / "manifest.yaml"
    quiet = _build(manifest, tmp_path / "out", _cache_reusing_lowered_programs(tmp_path, "a"))
    assert "validate" not in _cached_stages(quiet.stdout)  # it ran: the imports happened
    for noise in (TORCHAO, PYTREE, LEAFSPEC):
        assert noise not in quiet.stderr, noise
    loud = _build(manifest, tmp_path / "out", _cache_reusing_lowered_programs(tmp_path, "b"), "-v")
    assert "validate" not in _cached_stages(loud.stdout)
    for noise in (TORCHAO, PYTREE):
        assert noise in loud.stderr, noise


def _cached_stages(summary: str) -> set[str]:
    """Stage names the build summary marks `(cached)`."""
    [line] = [ln for ln in summary.splitlines() if ln.strip().startswith("stages")]
    parts = line.split(None, 1)[1].split(", ")
    return {p.split()[0] for p in parts if p.endswith("(cached)")}
