"""Mode decision (native / emulated / profile 0 only): what the runner says, case by case.

Which mode each combination gets is pinned by the shared vectors
(`tests/vectors/mode_decision.json`, run by tests/policy/test_conformance.py against
Python and C++); these tests pin the sentences a user reads and the runner's use of
the decision (TensorRT cannot be installed here, so the decision is a pure function
of the bundle's recorded delegates and the runner's capabilities).
"""

from __future__ import annotations

from trt_edge_runner.actuator import NATIVE_PROFILE_GUARD
from trt_edge_runner.policy import TENSORRT_BACKEND_ID, decide_mode

TRT = TENSORRT_BACKEND_ID
XNN = "XnnpackBackend"


def test_tensorrt_with_native_guard_runs_native_and_says_nothing() -> None:
    decision = decide_mode([TRT], 2, native_guard=True, honour_policy=True)
    assert (decision.mode, decision.profile0_only, decision.notice, decision.message) == (
        "native",
        False,
        None,
        None,
    )


def test_tensorrt_multi_profile_without_guard_runs_profile_zero_and_says_why() -> None:
    decision = decide_mode([TRT, XNN], 3, native_guard=False, honour_policy=True)
    assert decision.mode == "emulated" and decision.profile0_only
    assert decision.notice == "tensorrt_without_native_guard"
    assert decision.message is not None
    assert "3 optimization profiles" in decision.message and "profile 0 only" in decision.message


def test_tensorrt_single_profile_without_guard_is_unchanged_and_silent() -> None:
    decision = decide_mode([TRT], 1, native_guard=False, honour_policy=True)
    assert (decision.mode, decision.profile0_only, decision.message) == ("emulated", False, None)


def test_ignoring_the_policy_is_noted_for_multi_profile_bundles_only() -> None:
    multi = decide_mode([XNN], 2, native_guard=False, honour_policy=False)
    assert multi.profile0_only and multi.message and "honour_policy=False" in multi.message
    single = decide_mode([XNN], 1, native_guard=False, honour_policy=False)
    assert single.profile0_only and single.message is None


def test_the_python_runner_has_no_native_guard() -> None:
    # Upstream's OptimizationProfileGuard is C++ only (no Python binding): a multi-profile
    # TensorRT bundle opened by the Python runner is always profile 0 only.
    assert NATIVE_PROFILE_GUARD is False
    decision = decide_mode([TRT], 2, native_guard=NATIVE_PROFILE_GUARD, honour_policy=True)
    assert decision.profile0_only and decision.notice == "tensorrt_without_native_guard"
