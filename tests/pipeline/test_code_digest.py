"""A stage's cache key follows the code the stage imports (issue 20, point 1).

The packages are copied into a temporary folder and edited there: every module in a
stage's closure changes the stage's digest when edited; a module outside it does not.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import trt_edge
import trt_edge_runner
from trt_edge.pipeline.code_digest import (
    EXPORT_ENTRIES,
    VALIDATE_ENTRIES,
    module_closure,
    stage_code_digest,
)

STAGES = {"export": EXPORT_ENTRIES, "validate": VALIDATE_ENTRIES}


@pytest.fixture
def roots(tmp_path: Path) -> dict[str, Path]:
    """Copies of our two packages, safe to edit."""
    copies = {}
    for package in (trt_edge, trt_edge_runner):
        source = Path(str(package.__file__)).parent
        copies[package.__name__] = Path(
            shutil.copytree(
                source, tmp_path / package.__name__, ignore=shutil.ignore_patterns("__pycache__")
            )
        )
    return copies


def _edit(path: Path) -> None:
    path.write_text(path.read_text() + "\n# an edit\n")


@pytest.mark.parametrize("stage", sorted(STAGES))
def test_editing_any_imported_module_changes_the_stage_key(
    stage: str, roots: dict[str, Path]
) -> None:
    entries = STAGES[stage]
    closure = module_closure(entries, roots)
    seen = {stage_code_digest(entries, roots)}
    for name, path in sorted(closure.items()):
        _edit(path)
        digest = stage_code_digest(entries, roots)
        assert digest not in seen, f"editing {name} did not change the {stage} key"
        seen.add(digest)


@pytest.mark.parametrize("stage", sorted(STAGES))
def test_editing_a_module_the_stage_does_not_import_keeps_its_key(
    stage: str, roots: dict[str, Path]
) -> None:
    entries = STAGES[stage]
    before = stage_code_digest(entries, roots)
    outside = roots["trt_edge"] / "cli" / "main.py"
    assert "trt_edge.cli.main" not in module_closure(entries, roots)
    _edit(outside)
    assert stage_code_digest(entries, roots) == before


def test_validate_closure_follows_function_local_imports(roots: dict[str, Path]) -> None:
    """validate.py imports the runner inside functions; the runner's selection and
    refusal logic (emulation.py, once missing from a hand-kept list) must count."""
    closure = module_closure(VALIDATE_ENTRIES, roots)
    for name in ("runner", "emulation", "actuator", "dtypes", "bundle_integrity"):
        assert f"trt_edge_runner.{name}" in closure


def test_relative_and_from_imports_resolve(tmp_path: Path) -> None:
    package = tmp_path / "trt_edge"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("")
    (package / "sub" / "a.py").write_text("def f():\n    from . import b\n")
    (package / "sub" / "b.py").write_text("from ..c import x\n")
    (package / "c.py").write_text("x = 1\n")
    (package / "d.py").write_text("")
    closure = module_closure(["trt_edge.sub.a"], {"trt_edge": package})
    assert sorted(closure) == [
        "trt_edge",
        "trt_edge.c",
        "trt_edge.sub",
        "trt_edge.sub.a",
        "trt_edge.sub.b",
    ]
