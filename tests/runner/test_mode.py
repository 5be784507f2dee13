"""Mode decision (native / emulated / profile 0 only) for every delegate and guard combination.

TensorRT cannot be installed here, so the decision is a pure function of the
bundle's recorded delegates and the runtime's capabilities, tested directly;
the runner applies exactly this decision at open (tests/runner/test_runner.py).
"""

from __future__ import annotations

from dataclasses import replace

from runner.tiny_bundles import INPUTS, OUTPUTS  # type: ignore[import-not-found]
from trt_edge_runner.bundle_format import (
    SCHEMA_VERSION,
    BundleManifest,
    DelegateInfo,
    DimRange,
    Profile,
    RuntimePolicy,
)
from trt_edge_runner.runner import decide_mode

TRT = DelegateInfo("TensorRTBackend", "forward", 0, 4096)
XNN = DelegateInfo("XnnpackBackend", "forward", 0, 1024)


def manifest(profiles: int, *delegates: DelegateInfo) -> BundleManifest:
    return BundleManifest(
        schema_version=SCHEMA_VERSION,
        name="m",
        version="1",
        backend="tensorrt",
        target={},
        method="forward",
        inputs=INPUTS,
        outputs=OUTPUTS,
        profiles=tuple(
            Profile(f"p{i}", {"seq": DimRange(i * 8 + 1, i * 8 + 1, i * 8 + 8)})
            for i in range(profiles)
        ),
        runtime=RuntimePolicy("auto", {"run": "auto"}),
        files={},
        delegates=delegates,
    )


def test_tensorrt_with_native_guard_runs_native() -> None:
    decision = decide_mode(manifest(2, TRT), native_guard=True, honour_policy=True)
    assert (decision.mode, decision.profile0_only, decision.notice) == ("native", False, None)


def test_tensorrt_multi_profile_without_guard_runs_profile_zero_and_says_why() -> None:
    decision = decide_mode(manifest(3, TRT, XNN), native_guard=False, honour_policy=True)
    assert decision.mode == "emulated" and decision.profile0_only
    assert decision.notice is not None
    assert "3 optimization profiles" in decision.notice and "profile 0 only" in decision.notice


def test_tensorrt_single_profile_without_guard_is_unchanged_and_silent() -> None:
    decision = decide_mode(manifest(1, TRT), native_guard=False, honour_policy=True)
    assert (decision.mode, decision.profile0_only, decision.notice) == ("emulated", False, None)


def test_cpu_delegates_are_always_emulated() -> None:
    for guard in (True, False):
        decision = decide_mode(manifest(2, XNN), native_guard=guard, honour_policy=True)
        assert (decision.mode, decision.profile0_only) == ("emulated", False)


def test_ignoring_the_policy_is_profile_zero_only_and_noted_for_multi_profile() -> None:
    multi = decide_mode(manifest(2, XNN), native_guard=False, honour_policy=False)
    assert multi.profile0_only and multi.notice and "honour_policy=False" in multi.notice
    single = decide_mode(replace(manifest(1, XNN)), native_guard=False, honour_policy=False)
    assert single.profile0_only and single.notice is None
