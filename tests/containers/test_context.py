"""The build context: which project files go into an image, and the content digest."""

from __future__ import annotations

import json
import os
import shutil
import tarfile
from pathlib import Path

import pytest
from trt_edge.containers import catalog, context, dockerfile, runner_tarball


def rel(files: list[Path], root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in files}


def test_sources_keep_subpackages_named_build_but_not_build_trees(tmp_path: Path) -> None:
    for name in (
        "sdk/pyproject.toml",
        "sdk/trt_edge/pipeline/run.py",  # a real subpackage called build
        "sdk/build/lib/trt_edge/x.py",  # setuptools output
        "sdk/trt_edge/__pycache__/a.cpython-311.pyc",
        "sdk/trt_edge.egg-info/PKG-INFO",
        "device_runner/cpp/build/CMakeCache.txt",
        "device_runner/trt_edge_runner/runner.py",
    ):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(name)
    assert rel(context.source_files("sdk", tmp_path), tmp_path) == {
        "sdk/pyproject.toml",
        "sdk/trt_edge/pipeline/run.py",
    }
    assert rel(context.source_files("device_runner", tmp_path), tmp_path) == {
        "device_runner/trt_edge_runner/runner.py"
    }


def test_this_checkout_ships_the_build_pipeline() -> None:
    names = rel(context.source_files("sdk"), context.project_root())
    assert "sdk/trt_edge/pipeline/run.py" in names
    assert "sdk/trt_edge/containers/build_runner.py" in names


def test_assembled_context_has_what_the_dockerfile_copies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, x86_64_runner_tarball: Path
) -> None:
    certs = tmp_path / "ca"
    certs.mkdir()
    (certs / "corp.crt").write_text("-----BEGIN CERTIFICATE-----\n")
    monkeypatch.setenv(context.CA_DIR_ENV, str(certs))
    spec = catalog.load_spec("cpu-runtime")
    wheel = tmp_path / "demo-1.0-py3-none-any.whl"
    wheel.write_bytes(b"wheel")
    dest = tmp_path / "ctx"
    dest.mkdir()
    context.assemble(spec, [wheel], dest)
    assert (dest / "Dockerfile").read_text() == dockerfile.expand(spec).text
    assert (dest / "lock.txt").is_file()
    assert (dest / "device-entrypoint.sh").is_file()  # the device-service fragment's context file
    assert not (dest / "image.json").exists()
    assert [p.name for p in (dest / "wheels").iterdir()] == [wheel.name]
    assert (dest / "src" / "device_runner" / "pyproject.toml").is_file()
    assert not (dest / "src" / "sdk").exists()  # a device image carries no host SDK
    assert sorted(p.name for p in (dest / "certs").iterdir()) == [".keep", "00-corp.crt"]
    # The runner tarball, unpacked below its top folder, executable bits kept.
    runner = dest / context.RUNNER_DIR
    assert json.loads((runner / "runner.json").read_text())["arch"] == "x86_64"
    assert os.access(runner / "bin" / "trt-edge-run", os.X_OK)
    assert any((runner / "lib").glob("libexecutorch*.so"))


def test_a_builder_context_takes_no_runner(tmp_path: Path) -> None:
    dest = tmp_path / "ctx"
    dest.mkdir()
    context.assemble(catalog.load_spec("cpu"), [], dest)
    assert not (dest / context.RUNNER_DIR).exists()
    assert not (dest / "device-entrypoint.sh").exists()
    assert (dest / "src" / "sdk" / "pyproject.toml").is_file()


def test_digest_follows_the_runner_tarball_contents_and_sources(
    tmp_path: Path, x86_64_runner_tarball: Path
) -> None:
    """A stale runner can never pass for current: its sources and contents are in the key."""
    root = tmp_path / "checkout"
    cpp = context.project_root() / "device_runner" / "cpp"
    shutil.copytree(
        cpp,
        root / "device_runner" / "cpp",
        ignore=lambda folder, names: [
            n for n in names if folder == str(cpp) and n.startswith("build")
        ],
    )
    (root / "dist").mkdir()
    assert runner_tarball.digest("x86_64", root) != runner_tarball.digest(
        "x86_64", context.project_root()
    )
    copied = root / "dist" / x86_64_runner_tarball.name
    shutil.copy2(x86_64_runner_tarball, copied)
    with_tarball = runner_tarball.digest("x86_64", root)
    assert with_tarball == runner_tarball.digest("x86_64", context.project_root())
    # The same contents packed again at another time (gzip and tar mtimes differ): same digest.
    repacked = tmp_path / "repacked"
    with tarfile.open(copied) as tar:
        tar.extractall(repacked, filter="data")
    with tarfile.open(copied, "w:gz") as tar:
        for path in sorted(repacked.rglob("*")):
            os.utime(path, (1, 1))
        tar.add(next(repacked.iterdir()), arcname=next(repacked.iterdir()).name)
    assert runner_tarball.digest("x86_64", root) == with_tarball
    # A changed byte in the runner, or a changed C++ source: another digest.
    binary = next(repacked.iterdir()) / "bin" / "trt-edge-run"
    binary.write_bytes(binary.read_bytes() + b"\0")
    with tarfile.open(copied, "w:gz") as tar:
        tar.add(next(repacked.iterdir()), arcname=next(repacked.iterdir()).name)
    assert runner_tarball.digest("x86_64", root) != with_tarball
    shutil.copy2(x86_64_runner_tarball, copied)
    source = root / "device_runner" / "cpp" / "runner" / "main.cpp"
    source.write_text(source.read_text() + "// changed\n")
    assert runner_tarball.digest("x86_64", root) != with_tarball


def test_digest_changes_with_sources_and_certs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = catalog.load_spec("cpu-runtime")
    monkeypatch.setenv(context.CA_DIR_ENV, str(tmp_path))
    before = context.digest_inputs(spec)
    (tmp_path / "extra.crt").write_text("x")
    after = context.digest_inputs(spec)
    assert after.certs == before.certs + 1
    assert after.certs_sha256 != before.certs_sha256
    assert after.source_sha256 == before.source_sha256
