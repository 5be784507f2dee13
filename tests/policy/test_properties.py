"""Hypothesis properties of select_profile over arbitrary (also malformed) tables."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from hypothesis import given, settings
from hypothesis import strategies as st
from trt_edge_runner.policy import (
    Outcome,
    ProfileBounds,
    ProfileTable,
    Request,
    profile_fits,
    select_profile,
)

extent = st.integers(min_value=-2, max_value=12)
shape = st.lists(extent, min_size=0, max_size=3).map(tuple)


@st.composite
def bounds_st(draw: st.DrawFn) -> ProfileBounds:
    lo = draw(shape)
    # Mostly well-formed (same rank, lo <= hi); sometimes a malformed rank.
    well_formed = draw(st.booleans())
    hi = tuple(a + draw(st.integers(0, 6)) for a in lo) if well_formed else draw(shape)
    return ProfileBounds(lo, hi)


@st.composite
def table_st(draw: st.DrawFn) -> ProfileTable:
    n_inputs = draw(st.integers(0, 3))
    rows = draw(
        st.lists(
            st.lists(bounds_st(), min_size=max(0, n_inputs - 1), max_size=n_inputs + 1).map(tuple),
            min_size=0,
            max_size=4,
        )
    )
    active = draw(st.integers(-2, 5))
    return ProfileTable(tuple(rows), active)


inputs_st = st.lists(shape, min_size=0, max_size=3).map(tuple)
request_st = st.one_of(
    st.just(Request.default()),
    st.just(Request.auto()),
    st.integers(-3, 6).map(Request.pinned),
)


@settings(max_examples=200, deadline=None)
@given(table_st(), request_st, inputs_st)
def test_never_raises_and_profile_present_exactly_when_continuing(
    table: ProfileTable, request: Request, inputs: tuple[tuple[int, ...], ...]
) -> None:
    got = select_profile(table, request, inputs)
    assert (got.profile is not None) == got.outcome.continues
    if got.profile is not None:
        assert 0 <= got.profile < len(table.bounds)


@settings(max_examples=200, deadline=None)
@given(table_st(), inputs_st)
def test_auto_is_sticky_first_fit(table: ProfileTable, inputs: tuple[tuple[int, ...], ...]) -> None:
    got = select_profile(table, Request.auto(), inputs)
    fitting = [p for p in range(len(table.bounds)) if profile_fits(table, p, inputs)]
    if not fitting:
        assert got.outcome is Outcome.NO_PROFILE_MATCHES_INPUTS
    elif table.active in fitting:
        assert got.profile == table.active
    else:
        assert got.profile == fitting[0]


@settings(max_examples=150, deadline=None)
@given(table_st(), st.integers(-3, 6), inputs_st)
def test_pin_rules(table: ProfileTable, index: int, inputs: tuple[tuple[int, ...], ...]) -> None:
    got = select_profile(table, Request.pinned(index), inputs)
    n = len(table.bounds)
    if n == 0:
        assert got.outcome is Outcome.NO_PROFILE_MATCHES_INPUTS
    elif 0 <= index < n:
        assert got.profile == index and got.outcome is Outcome.OK
    elif index > 0 and n == 1:
        assert got.profile == 0 and got.outcome is Outcome.PIN_IGNORED_SINGLE_PROFILE
    else:
        assert got.outcome is Outcome.REQUESTED_PROFILE_UNAVAILABLE


@settings(max_examples=200, deadline=None)
@given(table_st(), inputs_st)
def test_a_selected_auto_profile_fits_every_input(
    table: ProfileTable, inputs: tuple[tuple[int, ...], ...]
) -> None:
    got = select_profile(table, Request.auto(), inputs)
    if got.profile is not None:
        for i, dims in enumerate(inputs):
            b = table.bounds[got.profile][i]
            assert len(dims) == len(b.min) == len(b.max)
            assert all(lo <= d <= hi for d, lo, hi in zip(dims, b.min, b.max, strict=True))


# A guard plan: a tree of nested guards, some of whose bodies raise.
GuardPlan = tuple[int | Literal["auto"], bool, Sequence["GuardPlan"]]
guard_spec = st.one_of(st.integers(0, 5), st.just("auto"))
plan_st = st.recursive(
    st.tuples(guard_spec, st.booleans(), st.just(())),
    lambda children: st.tuples(guard_spec, st.booleans(), st.lists(children, max_size=3)),
    max_leaves=12,
)


class _Planned(Exception):
    pass


@settings(max_examples=150, deadline=None)
@given(st.lists(plan_st, max_size=3))
def test_nested_guards_always_restore_the_enclosing_request(plans: list[GuardPlan]) -> None:
    from trt_edge_runner.guard import OptimizationProfileGuard, current_request

    def run(plan: GuardPlan, enclosing: Request) -> None:
        spec, raises, children = plan
        guard = (
            OptimizationProfileGuard.automatic()
            if spec == "auto"
            else OptimizationProfileGuard(spec)
        )
        mine = Request.auto() if spec == "auto" else Request.pinned(spec)
        try:
            with guard:
                assert current_request() == mine
                for child in children:
                    run(child, mine)
                    assert current_request() == mine
                if raises:
                    raise _Planned
        except _Planned:
            pass
        assert current_request() == enclosing

    for plan in plans:
        run(plan, Request.default())
    assert current_request() == Request.default()
