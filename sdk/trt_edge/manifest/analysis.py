"""Derived facts about a profile list: export domain, overlaps and gaps.

Pure functions over `Profile`s (no YAML, no locations) so `trt-edge validate`
(as warnings) and `trt-edge profiles` (as a drawing) show the very same facts.
A profile is a box: one closed interval per symbol. An input shape fits a
profile when every symbol's extent lies in that profile's interval.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from trt_edge_runner.bundle_format import Profile, TensorSpec

Interval = tuple[int, int]  # closed [lo, hi]

# Gap search enumerates the grid of elementary cells; beyond this many cells the
# search falls back to per-symbol gaps (a manifest with that many is unusual).
MAX_GRID_CELLS = 50_000


@dataclass(frozen=True)
class Overlap:
    """Profiles `first` < `second` both accept every shape in `box`."""

    first: int
    second: int
    box: dict[str, Interval]
    second_inside_first: bool  # then auto (first-fit from 0) never picks `second`


@dataclass(frozen=True)
class Gap:
    """Shapes inside the export domain that no profile accepts."""

    box: dict[str, Interval]


def symbols_of(inputs: tuple[TensorSpec, ...]) -> tuple[str, ...]:
    """Symbol names in order of first use in `inputs`."""
    seen: dict[str, None] = {}
    for spec in inputs:
        for dim in spec.shape:
            if isinstance(dim, str):
                seen.setdefault(dim, None)
    return tuple(seen)


def export_domain(profiles: tuple[Profile, ...], symbols: tuple[str, ...]) -> dict[str, Interval]:
    """Per symbol, (min of mins, max of maxes): what torch.export is told."""
    domain: dict[str, Interval] = {}
    for symbol in symbols:
        extents = [p.dims[symbol] for p in profiles if symbol in p.dims]
        if extents:
            domain[symbol] = (min(e.min for e in extents), max(e.max for e in extents))
    return domain


def _box(profile: Profile, symbols: tuple[str, ...]) -> dict[str, Interval]:
    return {s: (profile.dims[s].min, profile.dims[s].max) for s in symbols if s in profile.dims}


def _intersect(a: dict[str, Interval], b: dict[str, Interval]) -> dict[str, Interval] | None:
    out: dict[str, Interval] = {}
    for symbol in a.keys() & b.keys():
        lo, hi = max(a[symbol][0], b[symbol][0]), min(a[symbol][1], b[symbol][1])
        if lo > hi:
            return None
        out[symbol] = (lo, hi)
    return out


def _contains(outer: dict[str, Interval], inner: dict[str, Interval]) -> bool:
    return all(
        s in outer and outer[s][0] <= lo and hi <= outer[s][1] for s, (lo, hi) in inner.items()
    )


def overlaps(profiles: tuple[Profile, ...], symbols: tuple[str, ...]) -> list[Overlap]:
    boxes = [_box(p, symbols) for p in profiles]
    found: list[Overlap] = []
    for i, j in itertools.combinations(range(len(boxes)), 2):
        common = _intersect(boxes[i], boxes[j])
        if common is not None:
            found.append(Overlap(i, j, common, _contains(boxes[i], boxes[j])))
    return found


def _elementary(points: set[int], domain: Interval) -> list[Interval]:
    """Split the domain at `points` (each the first value of a new piece)."""
    lo, hi = domain
    cuts = sorted(p for p in points if lo < p <= hi)
    pieces: list[Interval] = []
    start = lo
    for cut in cuts:
        pieces.append((start, cut - 1))
        start = cut
    pieces.append((start, hi))
    return pieces


def gaps(profiles: tuple[Profile, ...], symbols: tuple[str, ...]) -> list[Gap]:
    """Boxes of the export domain no profile covers (exact on a grid of elementary cells)."""
    domain = export_domain(profiles, symbols)
    used = [s for s in symbols if s in domain]
    if not used:
        return []
    boxes = [_box(p, tuple(used)) for p in profiles]
    pieces = {
        s: _elementary({b[s][0] for b in boxes} | {b[s][1] + 1 for b in boxes}, domain[s])
        for s in used
    }
    cells = 1
    for s in used:
        cells *= len(pieces[s])
    if cells > MAX_GRID_CELLS:
        # Per-symbol only: values of one symbol that no profile covers at all.
        out: list[Gap] = []
        for s in used:
            for piece in pieces[s]:
                if not any(b[s][0] <= piece[0] and piece[1] <= b[s][1] for b in boxes):
                    out.append(Gap({s: piece}))
        return out
    uncovered: list[dict[str, Interval]] = []
    for combo in itertools.product(*(pieces[s] for s in used)):
        cell = dict(zip(used, combo, strict=True))
        if not any(_contains(b, cell) for b in boxes):
            uncovered.append(cell)
    return [Gap(cell) for cell in _merge_cells(uncovered, used)]


def _merge_cells(cells: list[dict[str, Interval]], symbols: list[str]) -> list[dict[str, Interval]]:
    """Join neighbouring cells that differ in one symbol, so a gap reads as one range."""
    merged = [dict(c) for c in cells]
    changed = True
    while changed:
        changed = False
        for a, b in itertools.combinations(range(len(merged)), 2):
            ca, cb = merged[a], merged[b]
            differing = [s for s in symbols if ca[s] != cb[s]]
            if len(differing) != 1:
                continue
            s = differing[0]
            lo, hi = sorted([ca[s], cb[s]])
            if lo[1] + 1 == hi[0]:
                ca[s] = (lo[0], hi[1])
                del merged[b]
                changed = True
                break
    return merged


def format_box(box: dict[str, Interval]) -> str:
    """`seq 2..8, batch 1` — how the CLI and messages write a region of shapes."""
    parts = []
    for symbol, (lo, hi) in box.items():
        parts.append(f"{symbol} {lo}" if lo == hi else f"{symbol} {lo}..{hi}")
    return ", ".join(parts) if parts else "every shape (all inputs are static)"
