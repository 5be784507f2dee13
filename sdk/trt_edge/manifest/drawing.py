"""Text drawings of profile ranges per symbol, so overlaps and gaps show at a glance.

One row per profile, one column per slice of the symbol's export domain; a
log2 scale when the domain spans more than 16× (LLM sequence lengths), linear
otherwise. Under the rows, an `overlap` row marks slices accepted by two or
more profiles and a `gap` row marks slices no profile accepts. Marks are
computed from exact integer intervals, then projected onto columns.
"""

from __future__ import annotations

import itertools
import math

from trt_edge_runner.bundle_format import Profile

from trt_edge.manifest.analysis import Interval

WIDTH = 48


def _columns(domain: Interval, width: int) -> tuple[list[Interval], str]:
    """Split the domain into at most `width` integer slices; returns slices and scale name."""
    lo, hi = domain
    span = hi - lo + 1
    if span <= width:
        return [(v, v) for v in range(lo, hi + 1)], "one column per value"
    if hi / max(lo, 1) > 16:
        a, b = math.log2(max(lo, 1)), math.log2(hi + 1)
        edges = sorted({max(lo, round(2 ** (a + (b - a) * i / width))) for i in range(width + 1)})
        edges = [e for e in edges if e <= hi] + [hi + 1]
        scale = "log2 scale"
    else:
        edges = [lo + (span * i) // width for i in range(width + 1)]
        scale = "linear scale"
    slices = [(s, e - 1) for s, e in itertools.pairwise(sorted(set(edges))) if e - 1 >= s]
    return slices, scale


def _hits(interval: Interval, cols: list[Interval]) -> list[bool]:
    return [not (c[1] < interval[0] or c[0] > interval[1]) for c in cols]


def _uncovered(intervals: list[Interval], domain: Interval) -> list[Interval]:
    out: list[Interval] = []
    cursor = domain[0]
    for lo, hi in sorted(intervals):
        if lo > cursor:
            out.append((cursor, lo - 1))
        cursor = max(cursor, hi + 1)
    if cursor <= domain[1]:
        out.append((cursor, domain[1]))
    return out


def draw_symbol(symbol: str, profiles: tuple[Profile, ...], domain: Interval) -> list[str]:
    cols, scale = _columns(domain, WIDTH)
    labels = [f"#{i} {p.name}" for i, p in enumerate(profiles)]
    pad = max([len(label) for label in labels] + [len("overlap")])
    lines = [f"{symbol}: export domain {domain[0]}..{domain[1]} ({scale})"]
    intervals: list[Interval] = []
    for label, profile in zip(labels, profiles, strict=True):
        r = profile.dims[symbol]
        intervals.append((r.min, r.max))
        bar = "".join("█" if h else "·" for h in _hits((r.min, r.max), cols))
        extent = f"{r.min}" if r.min == r.max else f"{r.min}..{r.max} (opt {r.opt})"
        lines.append(f"  {label:<{pad}} |{bar}| {extent}")
    overlap = [False] * len(cols)
    for a, b in itertools.combinations(intervals, 2):
        lo, hi = max(a[0], b[0]), min(a[1], b[1])
        if lo <= hi:
            overlap = [x or y for x, y in zip(overlap, _hits((lo, hi), cols), strict=True)]
    gap = [False] * len(cols)
    for hole in _uncovered(intervals, domain):
        gap = [x or y for x, y in zip(gap, _hits(hole, cols), strict=True)]
    if any(overlap):
        lines.append(f"  {'overlap':<{pad}} |{''.join('▲' if o else ' ' for o in overlap)}|")
    if any(gap):
        lines.append(f"  {'gap':<{pad}} |{''.join('✗' if g else ' ' for g in gap)}|")
    lines.append(
        f"  {'':<{pad}}  {domain[0]:<{len(cols) // 2}}{domain[1]:>{len(cols) - len(cols) // 2}}"
    )
    return lines
