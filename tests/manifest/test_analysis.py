"""Export domain, overlaps and gaps over profile boxes, including multi-symbol shapes."""

from __future__ import annotations

from trt_edge.manifest.analysis import Gap, export_domain, format_box, gaps, overlaps
from trt_edge.manifest.drawing import draw_symbol
from trt_edge_runner.bundle_format import DimRange, Profile


def profile(name: str, **dims: tuple[int, int]) -> Profile:
    return Profile(name, {s: DimRange(lo, lo, hi) for s, (lo, hi) in dims.items()})


SYMBOLS = ("batch", "seq")


def test_gap_that_no_single_symbol_shows_is_found_in_the_combination() -> None:
    # Every batch value and every seq value is covered by some profile, but
    # batch 2..8 with seq 129..512 is covered by none.
    profiles = (
        profile("long", batch=(1, 1), seq=(1, 512)),
        profile("wide", batch=(2, 8), seq=(1, 128)),
    )
    assert export_domain(profiles, SYMBOLS) == {"batch": (1, 8), "seq": (1, 512)}
    assert overlaps(profiles, SYMBOLS) == []
    assert gaps(profiles, SYMBOLS) == [Gap({"batch": (2, 8), "seq": (129, 512)})]


def test_overlap_needs_every_symbol_to_overlap() -> None:
    profiles = (
        profile("a", batch=(1, 4), seq=(1, 64)),
        profile("b", batch=(4, 8), seq=(65, 128)),  # batch overlaps, seq does not
        profile("c", batch=(2, 3), seq=(32, 40)),  # inside a
    )
    found = overlaps(profiles, SYMBOLS)
    assert [(o.first, o.second, o.box, o.second_inside_first) for o in found] == [
        (0, 2, {"batch": (2, 3), "seq": (32, 40)}, True)
    ]


def test_adjacent_profiles_leave_no_gap() -> None:
    profiles = (profile("s", batch=(1, 1)), profile("m", batch=(2, 8)), profile("l", batch=(9, 32)))
    assert gaps(profiles, ("batch",)) == [] and overlaps(profiles, ("batch",)) == []


def test_static_profiles_overlap_everywhere() -> None:
    profiles = (Profile("x", {}), Profile("y", {}))
    [ov] = overlaps(profiles, ())
    assert ov.box == {} and format_box(ov.box) == "every shape (all inputs are static)"


def test_drawing_marks_overlap_and_gap_columns() -> None:
    profiles = (profile("a", n=(1, 4)), profile("b", n=(3, 6)), profile("c", n=(9, 10)))
    lines = draw_symbol("n", profiles, (1, 10))
    rows = {line.split("|")[0].strip(): line.split("|")[1] for line in lines if "|" in line}
    assert rows["#0 a"] == "████······"
    assert rows["#1 b"] == "··████····"
    assert rows["#2 c"] == "········██"
    assert rows["overlap"] == "  ▲▲      "
    assert rows["gap"] == "      ✗✗  "
