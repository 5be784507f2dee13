"""Helpers for the build tests: write small manifests and models into a temp dir.

The models here are deliberately tiny (a Linear over a dynamic row count) so a
real export + ExecuTorch lowering takes seconds, not minutes.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest


def linear_model(
    forward: str, *, name: str = "Small", init: str = "", build: str = "", imports: str = ""
) -> str:
    """Source of a model over `x [rows, 4]` holding `self.linear = nn.Linear(4, 3)`, whose
    forward() body is `forward`; `init` adds to __init__, `build` runs before the model is
    made in `build()`, `imports` adds module imports. Tests vary only what they are about."""

    def body(code: str, indent: str) -> str:
        return textwrap.indent(textwrap.dedent(code).strip(), indent) + "\n" if code else ""

    return (
        f"{imports.strip()}\nimport torch\nfrom torch import nn\n\n\n"
        f"class {name}(nn.Module):\n"
        "    def __init__(self) -> None:\n"
        "        super().__init__()\n"
        "        self.linear = nn.Linear(4, 3)\n"
        f"{body(init, ' ' * 8)}\n"
        "    def forward(self, x: torch.Tensor) -> torch.Tensor:\n"
        f"{body(forward, ' ' * 8)}\n\n"
        f"def build():\n{body(build, ' ' * 4)}    return {name}().eval()\n"
    )


SMALL_MODEL = linear_model("return torch.relu(self.linear(x)) * 2.0", build="torch.manual_seed(0)")

SMALL_MANIFEST = """
apiVersion: trt-edge/v1
kind: Model
metadata: {{name: {name}, version: 1.0.0}}
model:
  entrypoint: {entrypoint}
inputs:
  - {{name: x, dtype: float32, shape: [rows, 4]}}
profiles:
  - name: few
    dims: {{rows: {{min: 1, opt: 2, max: 4}}}}
  - name: many
    dims: {{rows: {{min: 5, opt: 8, max: 16}}}}
runtime:
  policy: pinned
  phases: {{one: few, batch: many}}
build:
  backend: {backend}
  precision: fp32
  targets: [cpu-x86_64]
validate:
  parity: {{atol: {atol}, rtol: {atol}}}
"""

WriteProject = Callable[..., Path]


@pytest.fixture
def write_project(tmp_path: Path) -> WriteProject:
    """Write model.py + manifest.yaml into a fresh dir; returns the manifest path."""
    counter = {"n": 0}

    def write(
        model: str = SMALL_MODEL,
        *,
        name: str = "small",
        entrypoint: str = "model.py:build",
        backend: str = "portable",
        atol: float = 1e-5,  # written as 1.0e-05: YAML 1.1 needs the dot
        manifest: str | None = None,
    ) -> Path:
        counter["n"] += 1
        project = tmp_path / f"project{counter['n']}"
        project.mkdir()
        (project / "model.py").write_text(textwrap.dedent(model), encoding="utf-8")
        text = manifest or SMALL_MANIFEST.format(
            name=name, entrypoint=entrypoint, backend=backend, atol=f"{atol:.1e}"
        )
        path = project / "manifest.yaml"
        path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
        return path

    return write


@pytest.fixture
def small_model() -> str:
    """Source of the small Linear model (tests append functions or patch it)."""
    return SMALL_MODEL


@pytest.fixture(name="linear_model")
def linear_model_fixture() -> Callable[..., str]:
    """`linear_model(forward, name=..., init=..., build=..., imports=...)`: a variant of the
    small model with another forward() body."""
    return linear_model
