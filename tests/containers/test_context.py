"""The build context: which project files go into an image, and the content digest."""

from __future__ import annotations

from pathlib import Path

import pytest
from trt_edge.containers import catalog, context


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
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
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
    assert (dest / "Dockerfile").is_file() and (dest / "lock.txt").is_file()
    assert (dest / "entrypoint.sh").is_file()
    assert not (dest / "image.json").exists()
    assert [p.name for p in (dest / "wheels").iterdir()] == [wheel.name]
    assert (dest / "src" / "device_runner" / "pyproject.toml").is_file()
    assert not (dest / "src" / "sdk").exists()  # a device image carries no host SDK
    assert sorted(p.name for p in (dest / "certs").iterdir()) == [".keep", "00-corp.crt"]


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
