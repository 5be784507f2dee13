"""Outputs of the tarballs' runners on both example bundles, at the examples' opt shapes.

The x86_64 tarball's `trt-edge-run` equals the Python runner (the ExecuTorch
runtime); the aarch64 one, under qemu, equals the x86_64 one within a tolerance
(different SIMD kernels may round differently). Each runner runs the examples built
for its own architecture (it refuses the other's): the same model.pte, a bundle.json
naming cpu-aarch64 or cpu-x86_64. Each comparison records its max abs difference,
which the test session prints at the end (summary_device_tarball).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from trt_edge_runner.bundle_format import BundleManifest
from trt_edge_runner.tensors import random_inputs

from tests.device_tarball.conftest import ExampleBundles
from tests.device_tarball.unpacked import DeviceRunner, run_bundle
from tests.helpers.summary_device_tarball import PROPERTY

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("device_tarball")]

# (example, phase, dims): the profiles' opt shapes.
CASES = [
    ("tiny_llm", "prefill", {"seq": 128}),
    ("tiny_llm", "decode", {"seq": 1}),
    ("vision", "infer", {"batch": 4}),
    ("vision", "infer", {"batch": 16}),
]
RTOL = ATOL = 1e-5


def case_id(case: tuple[str, str, dict[str, int]]) -> str:
    bundle, phase, dims = case
    return f"{bundle}-{phase}-" + ",".join(f"{k}={v}" for k, v in dims.items())


def inputs_for(bundle: Path, dims: dict[str, int]) -> tuple[BundleManifest, list[np.ndarray]]:
    manifest = BundleManifest.from_json((bundle / "bundle.json").read_bytes())
    arrays = random_inputs(manifest, dims, seed=sum(dims.values()))
    names = [s.name for s in manifest.inputs]
    if "start_pos" in names:  # the tiny LLM writes its KV cache from here: keep it in range
        arrays[names.index("start_pos")] = np.array([3], dtype=np.int64)
    return manifest, arrays


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_aarch64_outputs_equal_x86_64_on_the_examples(
    case: tuple[str, str, dict[str, int]],
    aarch64_runner: DeviceRunner,
    x86_64_runner: DeviceRunner,
    aarch64_examples: ExampleBundles,
    x86_64_examples: ExampleBundles,
    record_property: Callable[[str, object], None],
    tmp_path: Path,
) -> None:
    example, phase, dims = case
    x86_bundle: Path = getattr(x86_64_examples, example)
    arm_bundle: Path = getattr(aarch64_examples, example)
    assert (x86_bundle / "model.pte").read_bytes() == (arm_bundle / "model.pte").read_bytes()
    manifest, arrays = inputs_for(x86_bundle, dims)
    names = [s.name for s in manifest.inputs]
    x86_report, x86 = run_bundle(x86_64_runner, x86_bundle, phase, names, arrays, tmp_path / "x86")
    arm_report, arm = run_bundle(aarch64_runner, arm_bundle, phase, names, arrays, tmp_path / "arm")
    assert arm_report["profile"] == x86_report["profile"]
    assert arm_report["digests_verified"] is x86_report["digests_verified"] is True
    assert x86.keys() == arm.keys() and x86
    diff = 0.0
    for name, want in x86.items():
        got = arm[name]
        assert got.shape == want.shape and got.dtype == want.dtype, name
        np.testing.assert_allclose(
            got, want, rtol=RTOL, atol=ATOL, err_msg=f"{case_id(case)}: {name}"
        )
        diff = max(diff, float(np.max(np.abs(got.astype(np.float64) - want))))
    record_property(PROPERTY, f"{case_id(case)}: max |aarch64 - x86_64| = {diff:.3g}")


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_x86_64_tarball_equals_the_python_runner_on_the_examples(
    case: tuple[str, str, dict[str, int]],
    x86_64_runner: DeviceRunner,
    x86_64_examples: ExampleBundles,
    tmp_path: Path,
) -> None:
    from trt_edge_runner.runner import Runner

    example, phase, dims = case
    bundle: Path = getattr(x86_64_examples, example)
    manifest, arrays = inputs_for(bundle, dims)
    names = [s.name for s in manifest.inputs]
    report, got = run_bundle(x86_64_runner, bundle, phase, names, arrays, tmp_path)
    expected = Runner.open(bundle).run(phase, arrays)
    assert report["profile"] == expected.profile
    out_names = [s.name for s in manifest.outputs] or [
        f"output_{i}" for i in range(len(expected.outputs))
    ]
    for name, want in zip(out_names, expected.outputs, strict=True):
        np.testing.assert_allclose(got[name], want, rtol=1e-6, atol=1e-6, err_msg=name)
