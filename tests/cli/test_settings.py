"""trt_edge.settings: one precedence for every host `TRT_EDGE_*` variable, each value saying
where it came from, and a clear error naming the variable for one that does not parse."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from trt_edge import settings
from trt_edge.containers.wheelhouse import wheelhouse_dir
from trt_edge.pipeline.cache import default_cache_dir
from trt_edge.settings import BadSettingError, resolve

from tests.helpers.paths import REPO

TRT_EDGE = Path(sys.executable).with_name("trt-edge")
EXAMPLE = REPO / "examples" / "tiny_llm" / "manifest.yaml"


def test_unset_variables_give_the_defaults_and_say_so(tmp_path: Path) -> None:
    found = resolve({"XDG_CACHE_HOME": str(tmp_path)})
    assert found.cache_dir.value == tmp_path / "trt-edge"
    assert found.wheelhouse.value == tmp_path / "trt-edge-wheelhouse"
    assert found.build_mode.value is None
    assert found.container_pids.value == 4096
    assert {s.split(" (")[-1] for s in found.sources().values()} == {"default)"}


def test_a_variable_wins_over_the_default_and_is_named_as_the_source(tmp_path: Path) -> None:
    env = {settings.CACHE: str(tmp_path / "c"), settings.CONTAINER_CPUS: "1.5"}
    found = resolve(env)
    assert found.cache_dir == settings.Setting(tmp_path / "c", "$TRT_EDGE_CACHE")
    assert found.container_cpus == settings.Setting(1.5, "$TRT_EDGE_CONTAINER_CPUS")
    assert found.images_dir.source == "default"


@pytest.mark.parametrize(
    ("name", "raw", "expected"),
    [
        (settings.CONTAINER_CPUS, "two", "a positive number"),
        (settings.CONTAINER_PIDS, "-3", "a positive integer"),
        (settings.CONTAINER_TIMEOUT, "0", "a positive number of seconds"),
        (settings.BUILD_MODE, "remote", "`local` or `container`"),
    ],
)
def test_a_value_that_does_not_parse_names_the_variable_and_what_it_should_be(
    name: str, raw: str, expected: str
) -> None:
    with pytest.raises(BadSettingError) as info:
        resolve({name: raw})
    assert str(info.value) == f"${name}={raw!r}: not {expected}"
    assert info.value.hint is not None and name in info.value.hint


def test_the_process_environment_is_what_the_readers_see(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(settings.CACHE, str(tmp_path / "cache"))
    monkeypatch.setenv(settings.WHEELHOUSE, str(tmp_path / "wheels"))
    assert default_cache_dir() == tmp_path / "cache"
    assert wheelhouse_dir() == tmp_path / "wheels"


def test_a_bad_build_mode_refuses_the_build_naming_the_variable(tmp_path: Path) -> None:
    """Through the CLI: exit 2, the variable's name and the values it takes, no traceback."""
    env = {**os.environ, settings.BUILD_MODE: "remote"}
    argv = [str(TRT_EDGE), "build", str(EXAMPLE), "--out", str(tmp_path)]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False, timeout=120)
    assert done.returncode == 2, done.stderr
    assert "$TRT_EDGE_BUILD_MODE='remote': not `local` or `container`" in done.stderr
    assert "Traceback" not in done.stderr
    assert list(tmp_path.iterdir()) == []
