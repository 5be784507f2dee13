"""Writes `profile_selection.json`, the conformance vectors for profile selection.

Every expectation below is written by hand from the rules in docs/design.md
("Profile semantics") and Torch-TensorRT's `OptimizationProfileSelection.h`;
nothing here calls an implementation, so the vectors can catch both the Python
and the C++ one. The JSON file is the contract and is checked in; this script
only keeps it readable and reviewable. Regenerate with:

    .venv/bin/python tests/vectors/generate_profile_selection.py   # --check: compare only
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vector_file import vector_document, write_or_check

OUT = Path(__file__).with_name("profile_selection.json")

Case = dict[str, Any]


def b(lo: list[int], hi: list[int]) -> dict[str, list[int]]:
    """One input's bounds in one profile."""
    return {"min": lo, "max": hi}


def table(rows: list[list[dict[str, list[int]]]], active: int = 0) -> dict[str, Any]:
    return {"bounds": rows, "active": active}


def default() -> dict[str, Any]:
    return {"kind": "default"}


def auto() -> dict[str, Any]:
    return {"kind": "auto"}


def pinned(i: int) -> dict[str, Any]:
    return {"kind": "pinned", "index": i}


def ok(profile: int) -> dict[str, Any]:
    return {"outcome": "ok", "profile": profile}


def ignored() -> dict[str, Any]:
    return {"outcome": "pin_ignored_single_profile", "profile": 0}


UNAVAILABLE = {"outcome": "requested_profile_unavailable"}
NO_MATCH = {"outcome": "no_profile_matches_inputs"}


def case(
    name: str, tbl: dict[str, Any], request: dict[str, Any], inputs: list[list[int]], expect: Any
) -> Case:
    return {"name": name, "table": tbl, "request": request, "inputs": inputs, "expect": expect}


# --- tables ---------------------------------------------------------------
# LLM-shaped: one [1, seq] input; profile 0 decodes one token, profile 1 prefills.
# The ranges overlap at seq == 1, which makes the sticky rule observable.
def decode_prefill(active: int = 0) -> dict[str, Any]:
    return table([[b([1, 1], [1, 1])], [b([1, 1], [1, 2048])]], active)


# Three profiles with a gap (257..511 fits none) and an overlap (1..64).
def three(active: int = 0) -> dict[str, Any]:
    return table([[b([1, 1], [1, 64])], [b([1, 1], [1, 256])], [b([1, 512], [1, 2048])]], active)


# Two inputs: profile 0 accepts input 0 = [1, 1] but only input 1 = [1, 1].
def two_inputs(active: int = 0) -> dict[str, Any]:
    return table(
        [
            [b([1, 1], [1, 1]), b([1, 1], [1, 1])],
            [b([1, 1], [1, 1]), b([1, 1], [1, 128])],
        ],
        active,
    )


# Vision batch profiles: overlapping batch ranges over a static image shape.
def vision(active: int = 0) -> dict[str, Any]:
    return table(
        [
            [b([1, 3, 224, 224], [1, 3, 224, 224])],
            [b([2, 3, 224, 224], [8, 3, 224, 224])],
            [b([1, 3, 224, 224], [32, 3, 224, 224])],
        ],
        active,
    )


def static_pair(active: int = 0) -> dict[str, Any]:
    return table(
        [[b([1, 3, 224, 224], [1, 3, 224, 224])], [b([4, 3, 224, 224], [4, 3, 224, 224])]],
        active,
    )


SINGLE_STATIC = table([[b([1, 16], [1, 16])]])
SINGLE_DYNAMIC = table([[b([1, 1], [1, 2048])]])
EMPTY = table([])

DECODE = [[1, 1]]
PREFILL = [[1, 512]]
TOO_LONG = [[1, 4096]]
IMG = [3, 224, 224]


def cases() -> list[Case]:
    out: list[Case] = []
    add = out.append

    # Default: profile 0, no fit check; only an empty table stops it.
    add(
        case(
            "default runs profile 0 for a prefill shape",
            decode_prefill(),
            default(),
            PREFILL,
            ok(0),
        )
    )
    add(case("default ignores the active profile", decode_prefill(1), default(), PREFILL, ok(0)))
    add(case("default does not check fit (too long)", decode_prefill(), default(), TOO_LONG, ok(0)))
    add(case("default does not check rank", decode_prefill(), default(), [[1, 1, 1]], ok(0)))
    add(case("default on single-profile engine", SINGLE_STATIC, default(), [[1, 16]], ok(0)))
    add(case("default with active out of range", decode_prefill(5), default(), DECODE, ok(0)))
    add(case("default on empty table matches nothing", EMPTY, default(), DECODE, NO_MATCH))
    add(case("default on engine without inputs", table([[], []], 1), default(), [], ok(0)))

    # Pinned: verbatim when in range (no fit check), single-profile tolerance, else error.
    add(case("pin 0 on two profiles", decode_prefill(), pinned(0), DECODE, ok(0)))
    add(case("pin 1 on two profiles", decode_prefill(), pinned(1), PREFILL, ok(1)))
    add(
        case(
            "pin 1 with a decode shape is taken verbatim",
            decode_prefill(),
            pinned(1),
            DECODE,
            ok(1),
        )
    )
    add(case("pin 0 while profile 1 is active", decode_prefill(1), pinned(0), DECODE, ok(0)))
    add(
        case(
            "pin does not check fit (validation reports it)",
            decode_prefill(),
            pinned(0),
            PREFILL,
            ok(0),
        )
    )
    add(
        case(
            "pin 2 on two profiles is unavailable", decode_prefill(), pinned(2), DECODE, UNAVAILABLE
        )
    )
    add(
        case(
            "pin -1 on two profiles is unavailable",
            decode_prefill(),
            pinned(-1),
            DECODE,
            UNAVAILABLE,
        )
    )
    add(
        case(
            "pin -3 on two profiles is unavailable",
            decode_prefill(),
            pinned(-3),
            DECODE,
            UNAVAILABLE,
        )
    )
    add(case("pin 2 on three profiles", three(), pinned(2), PREFILL, ok(2)))
    add(case("pin 3 on three profiles is unavailable", three(), pinned(3), PREFILL, UNAVAILABLE))
    add(case("pin 99 on three profiles is unavailable", three(), pinned(99), PREFILL, UNAVAILABLE))
    add(
        case(
            "pin int32 max on three profiles is unavailable",
            three(),
            pinned(2147483647),
            PREFILL,
            UNAVAILABLE,
        )
    )
    add(case("pin 1 with active out of range", decode_prefill(7), pinned(1), PREFILL, ok(1)))
    add(case("pin 0 on single static profile", SINGLE_STATIC, pinned(0), [[1, 16]], ok(0)))
    add(
        case(
            "pin 1 on single static profile is ignored",
            SINGLE_STATIC,
            pinned(1),
            [[1, 16]],
            ignored(),
        )
    )
    add(
        case(
            "pin 5 on single dynamic profile is ignored",
            SINGLE_DYNAMIC,
            pinned(5),
            DECODE,
            ignored(),
        )
    )
    add(
        case(
            "pin 1 ignored on single profile even if shape misfits",
            SINGLE_STATIC,
            pinned(1),
            [[1, 17]],
            ignored(),
        )
    )
    add(
        case(
            "pin -1 on single static profile is unavailable",
            SINGLE_STATIC,
            pinned(-1),
            [[1, 16]],
            UNAVAILABLE,
        )
    )
    add(
        case(
            "pin -1 on single dynamic profile is unavailable",
            SINGLE_DYNAMIC,
            pinned(-1),
            DECODE,
            UNAVAILABLE,
        )
    )
    add(case("pin 0 on empty table matches nothing", EMPTY, pinned(0), DECODE, NO_MATCH))
    add(case("pin 1 on empty table matches nothing", EMPTY, pinned(1), DECODE, NO_MATCH))
    add(case("pin -1 on empty table matches nothing", EMPTY, pinned(-1), DECODE, NO_MATCH))
    add(case("pin 1 on static pair", static_pair(), pinned(1), [[1, *IMG]], ok(1)))

    # Auto: sticky first-fit.
    add(case("auto keeps active while it fits", decode_prefill(1), auto(), DECODE, ok(1)))
    add(case("auto keeps profile 0 for a decode shape", decode_prefill(0), auto(), DECODE, ok(0)))
    add(case("auto rescans when active stops fitting", decode_prefill(0), auto(), PREFILL, ok(1)))
    add(case("auto keeps prefill for a prefill shape", decode_prefill(1), auto(), PREFILL, ok(1)))
    add(case("auto with a shape no profile covers", decode_prefill(), auto(), TOO_LONG, NO_MATCH))
    add(case("auto rejects a higher rank", decode_prefill(), auto(), [[1, 1, 1]], NO_MATCH))
    add(case("auto rejects a lower rank", decode_prefill(), auto(), [[1]], NO_MATCH))
    add(case("auto rejects an extent below every min", three(), auto(), [[1, 0]], NO_MATCH))
    add(case("auto rescan takes the lowest of several fits", three(2), auto(), [[1, 32]], ok(0)))
    add(case("auto rescan skips a profile that is too small", three(2), auto(), [[1, 100]], ok(1)))
    add(case("auto sticky keeps 1 though 0 also fits", three(1), auto(), [[1, 32]], ok(1)))
    add(case("auto moves from 0 to 2 for a long shape", three(0), auto(), [[1, 1024]], ok(2)))
    add(case("auto shape in the gap matches nothing", three(0), auto(), [[1, 300]], NO_MATCH))
    add(case("auto at a profile's min boundary", three(0), auto(), [[1, 512]], ok(2)))
    add(case("auto at a profile's max boundary", three(0), auto(), [[1, 64]], ok(0)))
    add(case("auto one past profile 0's max", three(0), auto(), [[1, 65]], ok(1)))
    add(case("auto at the domain's max", three(2), auto(), [[1, 2048]], ok(2)))
    add(case("auto one past the domain's max", three(2), auto(), [[1, 2049]], NO_MATCH))
    add(
        case(
            "auto skips profile fitting input 0 but not input 1",
            two_inputs(0),
            auto(),
            [[1, 1], [1, 64]],
            ok(1),
        )
    )
    add(case("auto two inputs both fit profile 0", two_inputs(0), auto(), [[1, 1], [1, 1]], ok(0)))
    add(case("auto two inputs sticky on profile 1", two_inputs(1), auto(), [[1, 1], [1, 1]], ok(1)))
    add(
        case(
            "auto two inputs: input 0 fits nothing",
            two_inputs(0),
            auto(),
            [[1, 2], [1, 1]],
            NO_MATCH,
        )
    )
    add(
        case(
            "auto two inputs: input 1 fits nothing",
            two_inputs(1),
            auto(),
            [[1, 1], [1, 129]],
            NO_MATCH,
        )
    )
    add(
        case(
            "auto overlapping batch ranges pick lowest on rescan",
            vision(0),
            auto(),
            [[4, *IMG]],
            ok(1),
        )
    )
    add(case("auto overlapping batch ranges stay sticky", vision(2), auto(), [[4, *IMG]], ok(2)))
    add(case("auto overlapping: large batch moves to 2", vision(1), auto(), [[16, *IMG]], ok(2)))
    add(case("auto overlapping: batch 1 sticky on 2", vision(2), auto(), [[1, *IMG]], ok(2)))
    add(
        case("auto overlapping: batch 1 from 1 rescans to 0", vision(1), auto(), [[1, *IMG]], ok(0))
    )
    add(
        case(
            "auto overlapping: batch 33 matches nothing", vision(0), auto(), [[33, *IMG]], NO_MATCH
        )
    )
    add(case("auto on empty table matches nothing", EMPTY, auto(), DECODE, NO_MATCH))
    add(case("auto on empty table with no inputs", EMPTY, auto(), [], NO_MATCH))
    add(case("auto on engine without inputs keeps active", table([[], []], 1), auto(), [], ok(1)))
    add(case("auto on engine without inputs from 0", table([[], []], 0), auto(), [], ok(0)))
    add(case("auto single dynamic profile fits", SINGLE_DYNAMIC, auto(), PREFILL, ok(0)))
    add(case("auto single dynamic profile misfit", SINGLE_DYNAMIC, auto(), TOO_LONG, NO_MATCH))
    add(
        case(
            "auto accepts a zero extent inside range", table([[b([0], [4])]]), auto(), [[0]], ok(0)
        )
    )
    add(case("auto rejects a negative extent", table([[b([0], [4])]]), auto(), [[-1]], NO_MATCH))
    add(
        case(
            "auto with bounds rows longer than the inputs",
            table([[b([1, 1], [1, 8]), b([1, 1], [1, 8])]]),
            auto(),
            [[1, 4]],
            ok(0),
        )
    )

    # Static dims.
    add(
        case(
            "auto static shapes pick the exact profile", static_pair(0), auto(), [[4, *IMG]], ok(1)
        )
    )
    add(case("auto static shapes rescan back to 0", static_pair(1), auto(), [[1, *IMG]], ok(0)))
    add(
        case(
            "auto static shapes: batch between profiles",
            static_pair(0),
            auto(),
            [[2, *IMG]],
            NO_MATCH,
        )
    )
    add(
        case(
            "auto static shapes: one static dim off",
            static_pair(0),
            auto(),
            [[1, 3, 224, 225]],
            NO_MATCH,
        )
    )

    # Scalar (rank 0) inputs.
    scalar = table([[b([], [])]])
    add(case("auto scalar input fits a rank-0 profile", scalar, auto(), [[]], ok(0)))
    add(case("auto rank-1 input against rank-0 profile", scalar, auto(), [[1]], NO_MATCH))
    add(
        case(
            "auto scalar input against rank-1 profile",
            table([[b([1], [8])]]),
            auto(),
            [[]],
            NO_MATCH,
        )
    )
    mixed = table([[b([], []), b([1, 1], [1, 64])], [b([], []), b([1, 65], [1, 512])]], 0)
    add(case("auto scalar plus sequence input", mixed, auto(), [[], [1, 100]], ok(1)))
    add(case("pin on scalar plus sequence input", mixed, pinned(0), [[], [1, 100]], ok(0)))

    # Malformed tables never crash: they answer "does not fit".
    add(
        case(
            "auto rescans past an active index the table lacks",
            decode_prefill(7),
            auto(),
            PREFILL,
            ok(1),
        )
    )
    add(
        case(
            "auto with active out of range, decode shape", decode_prefill(7), auto(), DECODE, ok(0)
        )
    )
    add(case("auto with negative active", decode_prefill(-1), auto(), DECODE, ok(0)))
    add(
        case(
            "auto active out of range on single profile",
            table([[b([1, 1], [1, 8])]], 3),
            auto(),
            [[1, 2]],
            ok(0),
        )
    )
    short = [[b([1, 1], [1, 128])], [b([1, 1], [1, 128]), b([1, 1], [1, 128])]]
    add(
        case(
            "auto skips a bounds row shorter than the inputs",
            table(short, 0),
            auto(),
            [[1, 8], [1, 8]],
            ok(1),
        )
    )
    add(case("auto keeps a complete active row", table(short, 1), auto(), [[1, 8], [1, 8]], ok(1)))
    add(
        case(
            "auto all rows shorter than the inputs",
            table([[b([1], [8])], [b([1], [8])]]),
            auto(),
            [[2], [2]],
            NO_MATCH,
        )
    )
    add(
        case(
            "pin a short row is still taken verbatim",
            table(short, 1),
            pinned(0),
            [[1, 8], [1, 8]],
            ok(0),
        )
    )
    max_rank_off = [[b([1, 1], [1, 2048, 4])], [b([1, 1], [1, 2048])]]
    add(case("auto rank differs from max only", table(max_rank_off), auto(), [[1, 8]], ok(1)))
    min_rank_off = [[b([1, 1, 4], [1, 2048])], [b([1, 1], [1, 2048])]]
    add(case("auto rank differs from min only", table(min_rank_off), auto(), [[1, 8]], ok(1)))
    add(
        case(
            "auto rank-3 input against min rank 3 max rank 2",
            table(min_rank_off),
            auto(),
            [[1, 8, 4]],
            NO_MATCH,
        )
    )
    add(
        case(
            "auto consistent rank-3 bounds",
            table([[b([1, 1, 4], [1, 2048, 4])]]),
            auto(),
            [[1, 8, 4]],
            ok(0),
        )
    )
    both_bad = [[b([1, 1], [1, 2048, 4])], [b([1, 1, 4], [1, 2048])]]
    add(case("auto every profile malformed", table(both_bad), auto(), [[1, 8]], NO_MATCH))
    add(
        case(
            "default on a malformed table still runs 0", table(both_bad), default(), [[1, 8]], ok(0)
        )
    )
    return out


def main() -> None:
    description = (
        "Conformance vectors for trt-edge profile selection (docs/design.md, 'Profile semantics'). "
        "Run: python -m trt_edge_runner.conformance FILE, and the C++ trt_edge_conformance."
    )
    write_or_check(OUT, vector_document(cases(), description))


if __name__ == "__main__":
    main()
