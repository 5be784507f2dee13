"""Loading the model a manifest names: every way it can go wrong gets a located, clear error."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from trt_edge.manifest import load_manifest_or_raise
from trt_edge.pipeline.errors import ModelSourceError
from trt_edge.pipeline.load_model import load_model, source_digest

WriteProject = Callable[..., Path]


def _load(path: Path) -> object:
    return load_model(load_manifest_or_raise(path))


def test_loads_a_file_entrypoint_in_eval_mode(write_project: WriteProject) -> None:
    loaded = load_model(load_manifest_or_raise(write_project()))
    assert type(loaded.module).__name__ == "Small"
    assert not loaded.module.training


def test_missing_function_names_the_manifest_line_and_what_exists(
    write_project: WriteProject,
) -> None:
    path = write_project(entrypoint="model.py:nope")
    with pytest.raises(ModelSourceError) as info:
        _load(path)
    message = str(info.value)
    assert f"{path}:5:" in message  # the `entrypoint:` line of the manifest
    assert "has no function 'nope'" in message
    assert "build" in (info.value.hint or "")  # the hint lists the callables that do exist
    assert info.value.exit_code == 2


def test_function_that_raises_is_reported_with_its_exception(
    write_project: WriteProject, small_model: str
) -> None:
    path = write_project(
        small_model + "\ndef broken():\n    raise RuntimeError('weights missing')\n",
        entrypoint="model.py:broken",
    )
    with pytest.raises(ModelSourceError, match=r"broken\(\) raised RuntimeError: weights missing"):
        _load(path)


def test_result_that_is_not_a_module_is_refused(
    write_project: WriteProject, small_model: str
) -> None:
    path = write_project(
        small_model + "\ndef numbers():\n    return [1, 2]\n", entrypoint="model.py:numbers"
    )
    with pytest.raises(ModelSourceError, match=re.escape("returned list, not a torch.nn.Module")):
        _load(path)


def test_import_error_in_the_model_file_is_reported(write_project: WriteProject) -> None:
    path = write_project("import does_not_exist_anywhere\n")
    with pytest.raises(ModelSourceError, match="ModuleNotFoundError"):
        _load(path)


def test_forward_with_a_different_argument_count_is_refused(
    write_project: WriteProject, small_model: str
) -> None:
    model = small_model.replace("def forward(self, x: torch.Tensor)", "def forward(self, x, y)")
    path = write_project(model)
    with pytest.raises(ModelSourceError) as info:
        _load(path)
    assert "forward(x, y) takes 2..2 arguments but the manifest declares 1 inputs (x)" in str(
        info.value
    )


def test_module_entrypoint_that_cannot_be_found(write_project: WriteProject) -> None:
    path = write_project(entrypoint="no_such_pkg_trt_edge.models:build")
    with pytest.raises(
        ModelSourceError, match=re.escape("module 'no_such_pkg_trt_edge.models' cannot be found")
    ):
        source_digest(load_manifest_or_raise(path))


def test_source_digest_changes_with_the_code_and_not_with_unrelated_files(
    write_project: WriteProject, small_model: str
) -> None:
    path = write_project()
    manifest = load_manifest_or_raise(path)
    before = source_digest(manifest)
    assert before.files == ("model.py",)
    (path.parent / "notes.txt").write_text("irrelevant")
    assert source_digest(manifest).sha256 == before.sha256
    (path.parent / "model.py").write_text(small_model.replace("2.0", "3.0"))
    assert source_digest(manifest).sha256 != before.sha256


def test_module_entrypoint_is_imported_and_hashed_by_its_file(
    write_project: WriteProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_project(entrypoint="trt_edge_test_small_model:build")
    (path.parent / "model.py").rename(path.parent / "trt_edge_test_small_model.py")
    monkeypatch.syspath_prepend(str(path.parent))
    manifest = load_manifest_or_raise(path)
    assert source_digest(manifest).files == ("trt_edge_test_small_model.py",)
    assert type(load_model(manifest).module).__name__ == "Small"
