"""Input validation messages and the per-engine resolve step (warn once, sticky)."""

from __future__ import annotations

import logging

import pytest
from trt_edge_runner.emulation import ProfileResolver
from trt_edge_runner.errors import (
    ProfileMismatchError,
    RequestedProfileUnavailableError,
    RunnerError,
)
from trt_edge_runner.guard import OptimizationProfileGuard, current_request
from trt_edge_runner.input_check import check_inputs, no_match_error
from trt_edge_runner.policy import Outcome, ProfileBounds, ProfileTable, Request, Selection

from tests.policy.tables import decode_prefill, llm_manifest, two_inputs_three_profiles

NAMES = ["input_ids", "hidden"]


def test_fitting_inputs_pass() -> None:
    check_inputs(two_inputs_three_profiles(), 1, [(1, 300), (1, 300, 16)], names=NAMES)


def test_error_names_input_dim_value_and_range() -> None:
    with pytest.raises(ProfileMismatchError) as info:
        check_inputs(
            two_inputs_three_profiles(),
            2,
            [(1, 300), (1, 300, 16)],
            names=NAMES,
            profile_names=["decode", "mid", "prefill"],
        )
    message = str(info.value)
    assert "input 'input_ids' dim 1 = 300" in message
    assert "profile 2 ('prefill')" in message
    assert "[512, 2048]" in message
    assert isinstance(info.value, RunnerError)


def test_second_input_is_checked_too() -> None:
    with pytest.raises(ProfileMismatchError, match=r"'hidden' dim 2 = 8 .*\[16, 16\]"):
        check_inputs(two_inputs_three_profiles(), 1, [(1, 300), (1, 300, 8)], names=NAMES)


def test_rank_mismatch_names_the_expected_rank() -> None:
    with pytest.raises(ProfileMismatchError, match=r"'input_ids' has rank 3 .* expects rank 2"):
        check_inputs(decode_prefill(), 1, [(1, 5, 1)], names=["input_ids"])


def test_malformed_rows_are_reported_not_crashed_on() -> None:
    short = ProfileTable(((ProfileBounds((1,), (8,)),),))
    with pytest.raises(ProfileMismatchError, match="describes 1 input"):
        check_inputs(short, 0, [(2,), (2,)])
    with pytest.raises(ProfileMismatchError, match="does not exist"):
        check_inputs(short, 3, [(2,)])
    bad_rank = ProfileTable(((ProfileBounds((1, 1), (1, 8, 4)),),))
    with pytest.raises(ProfileMismatchError, match="malformed: ranks differ"):
        check_inputs(bad_rank, 0, [(1, 2)])


def test_check_inputs_reads_names_from_a_bundle_manifest() -> None:
    with pytest.raises(ProfileMismatchError, match=r"'input_ids' dim 1 = 5 .*'decode'.*\[1, 1\]"):
        check_inputs(llm_manifest(), 0, [(1, 5), (1, 5)])


def test_no_match_lists_every_profile() -> None:
    err = no_match_error(llm_manifest(), [(1, 4096), (1, 4096)])
    message = str(err)
    assert "input_ids=[1, 4096]" in message
    assert "profile 0 ('decode'): input_ids [1, 1]; positions [1, 1]" in message
    assert "profile 1 ('prefill'): input_ids [1, 32..2048]; positions [1, 32..2048]" in message


def test_resolver_is_sticky_across_executions() -> None:
    resolver = ProfileResolver(decode_prefill(), names=["input_ids"])
    assert resolver.resolve(Request.auto(), [(1, 64)]) == Selection(Outcome.OK, 1)
    assert resolver.active == 1
    # A decode shape also fits profile 1, so auto stays there (documented sticky rule).
    assert resolver.resolve(Request.auto(), [(1, 1)]).profile == 1
    assert resolver.resolve(Request.pinned(0), [(1, 1)]).profile == 0
    assert resolver.active == 0


def test_resolver_raises_for_each_failure_outcome() -> None:
    resolver = ProfileResolver.from_bundle(llm_manifest())
    with pytest.raises(ProfileMismatchError, match="no profile matches"):
        resolver.resolve(Request.auto(), [(1, 4096), (1, 4096)])
    with pytest.raises(RequestedProfileUnavailableError, match=r"pins profile 2, .* has 2 profile"):
        resolver.resolve(Request.pinned(2), [(1, 1), (1, 1)])
    with pytest.raises(RequestedProfileUnavailableError, match="never negative"):
        resolver.resolve(Request.pinned(-1), [(1, 1), (1, 1)])
    with pytest.raises(ProfileMismatchError, match=r"dim 1 = 5 .*\[1, 1\]"):
        resolver.resolve(Request.pinned(0), [(1, 5), (1, 5)])
    assert resolver.active == 0  # a failed execution does not move the active profile


def test_resolver_applies_the_current_guard() -> None:
    resolver = ProfileResolver(two_inputs_three_profiles())
    dims = [(1, 1000), (1, 1000, 16)]
    with OptimizationProfileGuard.automatic():
        assert resolver.resolve(current_request(), dims).profile == 2
    with OptimizationProfileGuard(1), pytest.raises(ProfileMismatchError):
        resolver.resolve(current_request(), dims)


def test_pin_ignored_is_logged_once_per_engine(caplog: pytest.LogCaptureFixture) -> None:
    single = ProfileTable(((ProfileBounds((1, 16), (1, 16)),),))
    first = ProfileResolver(single, engine="engine-a")
    second = ProfileResolver(single, engine="engine-b")
    with caplog.at_level(logging.WARNING, logger="trt_edge_runner.policy"):
        for _ in range(5):
            got = first.resolve(Request.pinned(1), [(1, 16)])
            assert got == Selection(Outcome.PIN_IGNORED_SINGLE_PROFILE, 0)
        second.resolve(Request.pinned(3), [(1, 16)])
        second.resolve(Request.pinned(3), [(1, 16)])
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 2
    assert "engine-a" in messages[0] and "profile 1" in messages[0]
    assert "engine-b" in messages[1] and "profile 3" in messages[1]


def test_pin_ignored_still_validates_inputs() -> None:
    single = ProfileTable(((ProfileBounds((1, 16), (1, 16)),),))
    with pytest.raises(ProfileMismatchError, match=r"dim 1 = 17"):
        ProfileResolver(single).resolve(Request.pinned(1), [(1, 17)])
