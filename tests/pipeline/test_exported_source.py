"""A saved torch.export program (`.pt2`) as the model source: used as is, checked vs profiles."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from trt_edge.pipeline.errors import ModelSourceError
from trt_edge.pipeline.run import BuildOptions, build

WriteProject = Callable[..., Path]


def _save_program(project: Path, dynamic: bool) -> None:
    import sys

    import torch

    sys.path.insert(0, str(project))
    try:
        import model  # the small model written by write_project
    finally:
        sys.path.remove(str(project))
        sys.modules.pop("model", None)
    shapes = ({0: torch.export.Dim("rows", min=1, max=16)},) if dynamic else None
    program = torch.export.export(model.build(), (torch.randn(8, 4),), dynamic_shapes=shapes)
    torch.export.save(program, str(project / "model.pt2"))


def _exported_manifest(path: Path) -> Path:
    text = path.read_text().replace("entrypoint: model.py:build", "exported: model.pt2")
    path.write_text(text)
    return path


@pytest.mark.slow
def test_pt2_with_a_covering_dim_builds_and_validates(
    write_project: WriteProject, tmp_path: Path
) -> None:
    path = write_project()
    _save_program(path.parent, dynamic=True)
    result = build(
        _exported_manifest(path),
        BuildOptions(out_dir=tmp_path / "out", cache_dir=tmp_path / "cache"),
    )
    assert result.report.ok
    doc = json.loads((result.bundle_dir / "bundle.json").read_bytes())
    assert doc["io"]["outputs"][0]["shape"] == ["rows", 3]
    assert doc["provenance"]["model_source_files"] == ["model.pt2"]


def test_pt2_exported_with_static_shapes_is_refused_naming_the_dim(
    write_project: WriteProject, tmp_path: Path
) -> None:
    path = write_project()
    _save_program(path.parent, dynamic=False)
    with pytest.raises(ModelSourceError) as info:
        build(
            _exported_manifest(path),
            BuildOptions(out_dir=tmp_path / "out", cache_dir=tmp_path / "cache"),
        )
    message = str(info.value)
    assert "input x dim 0" in message
    assert "static size 8" in message and "rows in [1, 16]" in message
    assert info.value.exit_code == 2
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())
