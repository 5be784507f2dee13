"""The export plan: one Dim per symbol over the union domain, samples and outside probes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from trt_edge.manifest import load_manifest_or_raise
from trt_edge.pipeline.plan import make_plan, sample_inputs
from trt_edge_runner.bundle_format import TensorSpec

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_tiny_llm_plan_spans_the_union_of_profiles() -> None:
    plan = make_plan(load_manifest_or_raise(EXAMPLES / "tiny_llm" / "manifest.yaml"))
    assert plan.domain == {"seq": (1, 512)}
    assert plan.dynamic == ("seq",)
    assert plan.example_symbols == {"seq": 512}


def test_samples_sit_at_min_opt_max_without_duplicates() -> None:
    plan = make_plan(load_manifest_or_raise(EXAMPLES / "tiny_llm" / "manifest.yaml"))
    got = [(s.profile, s.point, s.symbols["seq"]) for s in plan.samples]
    # decode is seq=1 at min, opt and max: one sample, not three.
    assert got == [(0, "min", 1), (1, "min", 2), (1, "opt", 128), (1, "max", 512)]


def test_outside_probes_step_one_past_each_profile_bound() -> None:
    plan = make_plan(load_manifest_or_raise(EXAMPLES / "vision" / "manifest.yaml"))
    got = [(p.profile, p.bound, p.value) for p in plan.outside]
    # batch 0 is never probed (a zero-sized batch is not "just outside" a profile).
    assert got == [(0, "max", 2), (1, "min", 1), (1, "max", 9), (2, "min", 8), (2, "max", 33)]


def test_samples_are_deterministic_per_seed() -> None:
    specs = (TensorSpec("x", "float32", ("n", 4)),)
    a = sample_inputs(specs, {"n": 3}, seed=5)
    b = sample_inputs(specs, {"n": 3}, seed=5)
    assert a[0].shape == (3, 4) and a[0].dtype == np.float32
    assert np.array_equal(a[0], b[0])


@settings(max_examples=50, deadline=None)
@given(
    low=st.integers(min_value=-1000, max_value=1000),
    width=st.integers(min_value=1, max_value=50),
    n=st.integers(min_value=1, max_value=64),
    seed=st.integers(min_value=0, max_value=2**31),
)
def test_integer_inputs_stay_inside_declared_values(
    low: int, width: int, n: int, seed: int
) -> None:
    specs = (TensorSpec("ids", "int64", (1, "n"), values=(low, low + width)),)
    (ids,) = sample_inputs(specs, {"n": n}, seed)
    assert ids.dtype == np.int64 and ids.shape == (1, n)
    assert ids.min() >= low and ids.max() < low + width
