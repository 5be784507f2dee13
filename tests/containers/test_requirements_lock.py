"""The lock of a model's own requirements: made with the host's pip, minus the builder's
packages, and checked before any container build — a missing, stale or hand-edited lock
is refused up front, naming the manifest place and the command that fixes it.

No Docker engine is needed: the checks run before one is asked (the tests point
`DOCKER_HOST` at nothing to prove it). `pip download` runs for real with this host's
settings, on small pure wheels.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from trt_edge.containers import catalog
from trt_edge.containers.build_runner import build_in_container
from trt_edge.containers.lockfile import LockFile, file_sha256, parse_lock, render_lock
from trt_edge.containers.requirements_lock import (
    RequirementsLockError,
    check_lock,
    generate_lock,
    lock_path,
    read_lock,
)
from trt_edge.containers.wheelhouse import wheelhouse_dir
from trt_edge.pipeline.run import BuildOptions, load

from tests.containers.requirements_projects import EXAMPLE, example_requirements, linear_project

pytestmark = pytest.mark.slow

NO_ENGINE = "unix:///nonexistent/docker.sock"
TQDM = "tqdm==4.70.1"  # pure, no dependencies on Linux, not in the cpu builder


def mini_builder(root: Path, keep: tuple[str, ...], name: str = "minib") -> catalog.ImageSpec:
    """An images/ folder with one builder whose lock is the cpu builder's entries `keep`."""
    cpu = parse_lock(catalog.load_spec("cpu").lock_file)
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "image.json").write_text(
        json.dumps({"description": "t", "role": "builder", "default_base": "x", "pip": {}})
    )
    entries = [e for e in cpu.entries if e.key in keep]
    (folder / "lock.txt").write_text(render_lock(name, "requirements.in", entries))
    return catalog.load_spec(name, root)


def test_the_lock_pins_the_closure_minus_what_the_builder_has(tmp_path: Path) -> None:
    """markdown-it-py needs mdurl; the builder has mdurl, so the lock pins markdown-it-py only."""
    spec = mini_builder(tmp_path / "images", keep=("mdurl",))
    manifest = load(linear_project(tmp_path / "p", ["markdown-it-py==4.3.0"]))
    lock = generate_lock(manifest, spec, folder=tmp_path / "wheels")
    assert lock.path == manifest.source_path.with_name("manifest.minib.lock")
    assert [(e.key, e.version) for e in lock.entries] == [("markdown-it-py", "4.3.0")]
    [wheel] = (tmp_path / "wheels").glob("markdown_it_py-4.3.0-*.whl")
    assert lock.entries[0].hashes == (file_sha256(wheel),)
    assert lock.header.requirements == ("markdown-it-py==4.3.0",)
    assert lock.header.builder_lock_sha256 == parse_lock(spec.lock_file).sha256()
    assert check_lock(manifest, spec).sha256() == lock.sha256()
    # pip's own format: the pins install with --require-hashes (the header is a comment).
    assert "--hash=sha256:" in lock.path.read_text()


def test_a_requirement_the_builder_already_has_gives_an_empty_lock(tmp_path: Path) -> None:
    spec = mini_builder(tmp_path / "images", keep=("mdurl",))
    manifest = load(linear_project(tmp_path / "p", ["mdurl==0.1.2"]))
    lock = generate_lock(manifest, spec, folder=tmp_path / "wheels")
    assert lock.entries == () and check_lock(manifest, spec).entries == ()


@pytest.fixture
def locked_for_cpu(tmp_path: Path) -> Path:
    """The Linear project requiring tqdm, locked for the real cpu builder (shared wheelhouse)."""
    manifest = linear_project(tmp_path / "p", [TQDM])
    generate_lock(load(manifest), catalog.load_spec("cpu"))
    return manifest


def add_requirement(manifest: Path, line: str) -> None:
    text = manifest.read_text()
    manifest.write_text(text.replace(f'["{TQDM}"]', f'["{TQDM}", "{line}"]'))


def test_a_requirement_missing_from_the_lock_is_refused_before_the_engine_is_asked(
    locked_for_cpu: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    add_requirement(locked_for_cpu, "idna==3.20")
    monkeypatch.setenv("DOCKER_HOST", NO_ENGINE)  # reaching the engine would fail otherwise
    with pytest.raises(RequirementsLockError) as info:
        build_in_container(
            locked_for_cpu, BuildOptions(out_dir=tmp_path / "out"), None, None, echo=print
        )
    message = str(info.value)
    assert info.value.exit_code == 2
    assert f"{lock_path(locked_for_cpu, 'cpu')} is stale for {locked_for_cpu}" in message
    where = load(locked_for_cpu).where("model", "requirements", 1)  # FILE:LINE:COL
    assert where.startswith(f"{locked_for_cpu}:9:")
    assert f"{where}: idna==3.20 is not in the lock" in message
    fix = f"trt-edge lock {locked_for_cpu} --builder cpu"
    assert info.value.hint == f"run `{fix}`, then check the lock in"
    assert not (tmp_path / "out").exists()


def test_the_cli_refuses_a_stale_lock_with_one_line_and_lock_check_says_so(
    locked_for_cpu: Path, tmp_path: Path
) -> None:
    env = {**os.environ, "DOCKER_HOST": NO_ENGINE}
    check = [sys.executable, "-m", "trt_edge", "lock", str(locked_for_cpu), "--check"]
    assert subprocess.run(check, capture_output=True, text=True, env=env).returncode == 0
    add_requirement(locked_for_cpu, "idna==3.20")
    build = [sys.executable, "-m", "trt_edge", "build", str(locked_for_cpu), "--container"]
    done = subprocess.run(
        [*build, "--out", str(tmp_path / "out")], capture_output=True, text=True, env=env
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    errors = [
        line for line in done.stderr.splitlines() if line.startswith("trt-edge build: error:")
    ]
    assert len(errors) == 1 and "manifest.cpu.lock is stale" in errors[0]
    assert f"hint: run `trt-edge lock {locked_for_cpu} --builder cpu`" in done.stderr
    stale = subprocess.run(check, capture_output=True, text=True, env=env)
    assert stale.returncode == 1 and "idna==3.20 is not in the lock" in stale.stderr
    # Relocking makes it current again; the build would now go on to the engine.
    relock = [sys.executable, "-m", "trt_edge", "lock", str(locked_for_cpu)]
    assert subprocess.run(relock, capture_output=True, text=True, env=env).returncode == 0
    assert subprocess.run(check, capture_output=True, text=True, env=env).returncode == 0


def test_missing_edited_or_outdated_locks_are_refused_with_the_command(tmp_path: Path) -> None:
    spec = mini_builder(tmp_path / "images", keep=("mdurl",))
    manifest = load(linear_project(tmp_path / "p", ["markdown-it-py==4.3.0"]))
    fix = f"trt-edge lock {manifest.source_path} --builder minib"
    with pytest.raises(RequirementsLockError) as info:
        check_lock(manifest, spec)
    assert "there is no " + str(lock_path(manifest.source_path, "minib")) in str(info.value)
    assert f"run `{fix}`" in str(info.value.hint)
    lock = generate_lock(manifest, spec, folder=tmp_path / "wheels")
    text = lock.path.read_text()

    # The pins edited by hand: the header still matches, the pins no longer satisfy it.
    lock.path.write_text(text.replace("\nmarkdown_it_py==4.3.0 ", "\nmarkdown_it_py==4.2.0 "))
    with pytest.raises(RequirementsLockError) as info:
        check_lock(manifest, spec)
    assert "markdown-it-py==4.3.0 is not satisfied by the lock (markdown-it-py 4.2.0)" in str(
        info.value
    )
    # The builder's own lock changed (its packages are what the lock leaves out).
    lock.path.write_text(text)
    builder = parse_lock(spec.lock_file)
    grown = LockFile(builder.path, (*builder.entries, *read_lock(lock.path, fix).entries))
    spec.lock_file.write_text(render_lock("minib", "requirements.in", grown.entries))
    with pytest.raises(RequirementsLockError) as info:
        check_lock(manifest, spec)
    assert "the minib builder's own lock changed since" in str(info.value)
    # A lock made for another builder, renamed to pass for this one's.
    other = mini_builder(tmp_path / "images", keep=("mdurl",), name="otherb")
    lock_path(manifest.source_path, "otherb").write_text(text)
    with pytest.raises(RequirementsLockError) as info:
        check_lock(manifest, other)
    assert "it was made for the minib builder, not otherb" in str(info.value)


def test_the_gemma3_examples_lock_is_current_for_the_cpu_builder(tmp_path: Path) -> None:
    """The checked-in lock matches the example's requirements and this checkout's cpu lock
    (re-run `trt-edge lock examples/gemma3/manifest.yaml` after changing either), and
    every wheel it names is in the host wheelhouse with its hash."""
    from trt_edge.containers.wheelhouse import prepare

    lock = read_lock(EXAMPLE / "manifest.cpu.lock", "trt-edge lock examples/gemma3/manifest.yaml")
    cpu = catalog.load_spec("cpu")
    assert lock.header.requirements == tuple(example_requirements())
    assert lock.header.builder == "cpu"
    assert lock.header.builder_lock_sha256 == parse_lock(cpu.lock_file).sha256()
    assert {"transformers", "tokenizers", "huggingface-hub"} <= set(lock.packages())
    assert not set(lock.packages()) & {e.key for e in parse_lock(cpu.lock_file).entries}
    wheels = prepare(lock.pins, cpu.pip)
    assert [w.parent for w in wheels] == [wheelhouse_dir()] * len(lock.entries)
