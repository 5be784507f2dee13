"""torch.export failures explained in manifest terms; output specs named after manifest symbols."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from trt_edge.manifest import load_manifest_or_raise
from trt_edge.pipeline.errors import ExportError
from trt_edge.pipeline.export import export_program, output_specs
from trt_edge.pipeline.load_model import load_model
from trt_edge.pipeline.plan import make_plan

WriteProject = Callable[..., Path]

# A Python branch on a shape: torch.export keeps the branch the example took and
# guards rows > 8, narrowing the symbol the profiles need from 1.
NARROWING_FORWARD = """
if x.shape[0] > 8:
    return self.linear(x) * 2
return self.linear(x)
"""

DATA_DEPENDENT_MODEL = """
import torch
from torch import nn


class Branchy(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.sum() > 0:  # a Python branch on tensor values
            return x * 2
        return x


def build():
    return Branchy().eval()
"""


def _export(path: Path) -> object:
    manifest = load_manifest_or_raise(path)
    return export_program(manifest, make_plan(manifest), load_model(manifest).module)


def test_guard_that_narrows_a_symbol_names_symbol_ranges_and_profiles(
    write_project: WriteProject, linear_model: Callable[..., str]
) -> None:
    path = write_project(linear_model(NARROWING_FORWARD, name="Narrow"))
    with pytest.raises(ExportError) as info:
        _export(path)
    message = str(info.value)
    assert message.startswith(f"{path}:")
    assert "symbol 'rows'" in message
    assert "[9, 16]" in message  # what torch inferred
    assert "[1, 16]" in message  # what the profiles need
    assert "profiles outside: 0 few" in message
    assert info.value.exit_code == 1


RAISING_MODEL = """
import torch
from torch import nn


class Raises(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.shape[0] > 8:
            raise ValueError("too many rows")
        return x


def build():
    return Raises().eval()
"""


def test_forward_raising_at_the_export_example_names_the_example_shape(
    write_project: WriteProject,
) -> None:
    with pytest.raises(ExportError) as info:
        _export(write_project(RAISING_MODEL))
    message = str(info.value)
    assert "forward() raised ValueError: too many rows" in message
    assert "rows=16" in message


def test_branch_on_tensor_values_is_explained(write_project: WriteProject) -> None:
    with pytest.raises(ExportError, match="depends on tensor values"):
        _export(write_project(DATA_DEPENDENT_MODEL))


def test_output_specs_use_the_manifest_symbol_names(write_project: WriteProject) -> None:
    path = write_project()
    manifest = load_manifest_or_raise(path)
    program = export_program(manifest, make_plan(manifest), load_model(manifest).module)
    (out,) = output_specs(manifest, program)
    assert (out.name, out.dtype, out.shape) == ("output_0", "float32", ("rows", 3))
