"""The overlap/gap analysis agrees, point by point, with the runner's real profile policy.

`trt-edge validate` warns about gaps (shapes that every profile rejects) and
explains what sticky first-fit does in overlaps. These properties check those
statements against brute force over every shape in small export domains and
against `trt_edge_runner.policy.select_profile`, the function devices run.
"""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st
from trt_edge.manifest.analysis import export_domain, gaps, overlaps
from trt_edge_runner.bundle_format import DimRange, Profile, TensorSpec
from trt_edge_runner.policy import (
    Outcome,
    ProfileBounds,
    ProfileTable,
    Request,
    select_profile,
)

SYMBOLS = ("batch", "seq")
INPUTS = (TensorSpec("x", "float32", ("batch", "seq", 4)),)


@st.composite
def profile_lists(draw: st.DrawFn) -> tuple[Profile, ...]:
    count = draw(st.integers(min_value=1, max_value=4))
    out = []
    for i in range(count):
        dims = {}
        for symbol in SYMBOLS:
            lo = draw(st.integers(min_value=1, max_value=10))
            hi = draw(st.integers(min_value=lo, max_value=12))
            dims[symbol] = DimRange(lo, lo, hi)
        out.append(Profile(f"p{i}", dims))
    return tuple(out)


def _inside(box: dict[str, tuple[int, int]], point: dict[str, int]) -> bool:
    return all(lo <= point[s] <= hi for s, (lo, hi) in box.items())


@settings(max_examples=150, deadline=None)
@given(profile_lists())
def test_gaps_and_overlaps_match_brute_force_and_the_policy(profiles: tuple[Profile, ...]) -> None:
    domain = export_domain(profiles, SYMBOLS)
    found_gaps = gaps(profiles, SYMBOLS)
    found_overlaps = overlaps(profiles, SYMBOLS)
    table = ProfileTable(
        bounds=tuple(tuple(ProfileBounds(lo, hi) for lo, hi in p.bounds(INPUTS)) for p in profiles),
        active=0,
    )
    ranges = [range(domain[s][0], domain[s][1] + 1) for s in SYMBOLS]
    for values in itertools.product(*ranges):
        point = dict(zip(SYMBOLS, values, strict=True))
        fitting = [
            i
            for i, p in enumerate(profiles)
            if all(p.dims[s].min <= point[s] <= p.dims[s].max for s in SYMBOLS)
        ]
        in_gap = any(_inside(g.box, point) for g in found_gaps)
        assert in_gap == (not fitting), point
        for a, b in itertools.combinations(range(len(profiles)), 2):
            reported = any(
                (o.first, o.second) == (a, b) and _inside(o.box, point) for o in found_overlaps
            )
            assert reported == (a in fitting and b in fitting), (point, a, b)
        # What the warning says auto does from a fresh start: the first profile that fits.
        selection = select_profile(table, Request.auto(), [(values[0], values[1], 4)])
        if fitting:
            assert (selection.outcome, selection.profile) == (Outcome.OK, fitting[0])
        else:
            assert selection.outcome is Outcome.NO_PROFILE_MATCHES_INPUTS
    for o in found_overlaps:
        if o.second_inside_first:
            # Never reached by auto unless pinned: every shape it accepts, `first` accepts too.
            p, q = profiles[o.first], profiles[o.second]
            assert all(
                p.dims[s].min <= q.dims[s].min and q.dims[s].max <= p.dims[s].max for s in SYMBOLS
            )
