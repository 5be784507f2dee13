"""The one dtype table (`trt_edge_runner.dtypes`): its readers agree with it, and bfloat16 —
the dtype numpy lacks — is handled as documented by both runners on a real program."""

from __future__ import annotations

import json
import subprocess
import typing
from pathlib import Path

import numpy as np
import pytest
from trt_edge.manifest import models, vocabulary
from trt_edge_runner.bundle_format import TensorSpec
from trt_edge_runner.dtypes import DTYPE_NAMES, DTYPES, INTEGER_DTYPES

from tests.helpers.bundles import write_bundle

VECTORS = Path(__file__).parents[1] / "vectors" / "dtypes.json"


def test_numpy_and_torch_agree_with_the_table() -> None:
    import torch

    for d in DTYPES:
        assert getattr(torch, d.torch).itemsize == d.itemsize, d
        if d.numpy is not None:
            assert np.dtype(d.numpy).itemsize == d.itemsize, d
            assert np.dtype(d.numpy).kind in {"float": "f", "int": "iu", "bool": "b"}[d.kind]


def test_the_manifest_schema_reads_the_table() -> None:
    assert typing.get_args(models.Dtype) == DTYPE_NAMES
    assert vocabulary.INTEGER_DTYPES == INTEGER_DTYPES
    schema = json.loads((Path(__file__).parents[2] / "manifests" / "schema.json").read_text())
    enums = [
        v["enum"] for v in _walk(schema) if isinstance(v, dict) and "bfloat16" in v.get("enum", [])
    ]
    assert enums and all(tuple(e) == DTYPE_NAMES for e in enums)


def _walk(node: object) -> typing.Iterator[object]:
    yield node
    if isinstance(node, dict):
        for v in node.values():
            yield from _walk(v)
    elif isinstance(node, list):
        for v in node:
            yield from _walk(v)


@pytest.mark.slow
def test_cpp_dtype_table_matches_the_python_table(trt_edge_dtype_conformance: Path) -> None:
    done = subprocess.run(
        [str(trt_edge_dtype_conformance), str(VECTORS)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip().splitlines()[-1] == f"{len(DTYPES)} passed, 0 failed"


@pytest.mark.slow
def test_cpp_dtype_check_fails_on_a_wrong_code(
    trt_edge_dtype_conformance: Path, tmp_path: Path
) -> None:
    doc = json.loads(VECTORS.read_text(encoding="utf-8"))
    row = next(r for r in doc["dtypes"] if r["name"] == "bfloat16")
    row["scalar_type"] = 5  # Half's code
    path = tmp_path / "dtypes.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    done = subprocess.run(
        [str(trt_edge_dtype_conformance), str(path)], capture_output=True, text=True
    )
    assert done.returncode == 1
    assert "FAIL bfloat16: ScalarType code 15, the table says 5" in done.stdout


@pytest.fixture(scope="module")
def bf16_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real portable program: x float32 [1, seq] -> (2x as bfloat16,), seq in 1..8."""
    import torch
    from executorch.exir import to_edge_transform_and_lower
    from torch.export import Dim, export

    class Double(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> tuple[torch.Tensor]:
            return ((x * 2).to(torch.bfloat16),)

    seq = Dim("seq", min=1, max=8)
    program = to_edge_transform_and_lower(
        export(Double(), (torch.ones(1, 4),), dynamic_shapes={"x": {1: seq}})
    ).to_executorch()
    root = tmp_path_factory.mktemp("bf16")
    (root / "double.pte").write_bytes(program.buffer)
    return write_bundle(
        root / "bf16-0.0.1",
        root / "double.pte",
        [("all", 1, 4, 8)],
        {"run": 0},
        inputs=(TensorSpec("x", "float32", (1, "seq")),),
        outputs=(TensorSpec("y", "bfloat16", (1, "seq")),),
        backend="portable",
    )


X = np.array([[1.5, 3.25, -2.0, 1e-3]], dtype=np.float32)


@pytest.mark.slow
def test_python_runner_widens_a_bfloat16_output_to_float32_exactly(bf16_bundle: Path) -> None:
    import torch
    from trt_edge_runner.runner import Runner

    result = Runner.open(bf16_bundle).run("run", [X])
    (y,) = result.outputs
    assert y.dtype == np.float32
    want = (torch.from_numpy(X) * 2).to(torch.bfloat16).to(torch.float32).numpy()
    np.testing.assert_array_equal(y, want)  # exact: every bfloat16 is a float32


@pytest.mark.slow
def test_cpp_runner_writes_the_same_widened_output(
    bf16_bundle: Path, trt_edge_run: Path, tmp_path: Path
) -> None:
    from trt_edge_runner.runner import Runner

    inputs = tmp_path / "in"
    inputs.mkdir()
    np.save(inputs / "x.npy", X)
    done = subprocess.run(
        [
            str(trt_edge_run),
            "--bundle",
            str(bf16_bundle),
            "--phase",
            "run",
            "--inputs",
            str(inputs),
            "--outputs",
            str(tmp_path / "out"),
            "--json",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1])["outputs"][0]["dtype"] == "bfloat16"
    got = np.load(tmp_path / "out" / "y.npy")
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, Runner.open(bf16_bundle).run("run", [X]).outputs[0])
