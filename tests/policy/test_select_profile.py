"""select_profile: the shared vectors, plus the rules by name."""

from __future__ import annotations

from pathlib import Path

import pytest
from trt_edge_runner.conformance import Case, load_cases
from trt_edge_runner.policy import (
    Outcome,
    ProfileBounds,
    ProfileTable,
    Request,
    Selection,
    profile_fits,
    select_profile,
)

from tests.policy.tables import decode_prefill, two_inputs_three_profiles

VECTORS = Path(__file__).parents[1] / "vectors" / "profile_selection.json"
CASES = load_cases(str(VECTORS))


def test_vectors_cover_the_issue_minimum() -> None:
    assert len(CASES) >= 60
    kinds = {c.request.kind for c in CASES}
    assert kinds == {"default", "pinned", "auto"}
    outcomes = {c.expect.outcome for c in CASES}
    assert outcomes == set(Outcome)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_vector(case: Case) -> None:
    assert select_profile(case.table, case.request, case.inputs) == case.expect


def test_auto_keeps_active_profile_while_it_fits() -> None:
    # Sticky: a decode shape after a prefill stays on prefill (ranges overlap at 1).
    assert select_profile(decode_prefill(1), Request.auto(), [(1, 1)]) == Selection(Outcome.OK, 1)


def test_auto_rescans_to_lowest_fitting_profile() -> None:
    table = two_inputs_three_profiles(active=2)
    got = select_profile(table, Request.auto(), [(1, 1), (1, 1, 16)])
    assert got == Selection(Outcome.OK, 0)


def test_default_is_profile_zero_without_fit_check() -> None:
    assert select_profile(decode_prefill(1), Request.default(), [(1, 9999)]).profile == 0


def test_pin_ignored_on_single_profile_engine() -> None:
    single = ProfileTable(((ProfileBounds((1, 16), (1, 16)),),))
    got = select_profile(single, Request.pinned(3), [(1, 16)])
    assert got == Selection(Outcome.PIN_IGNORED_SINGLE_PROFILE, 0)
    assert got.outcome.continues


@pytest.mark.parametrize("index", [-1, 2, 7])
def test_pin_outside_multi_profile_engine_is_unavailable(index: int) -> None:
    got = select_profile(decode_prefill(), Request.pinned(index), [(1, 1)])
    assert got == Selection(Outcome.REQUESTED_PROFILE_UNAVAILABLE, None)
    assert not got.outcome.continues


def test_outcome_values_are_the_contract_strings() -> None:
    assert [o.value for o in Outcome] == [
        "ok",
        "pin_ignored_single_profile",
        "requested_profile_unavailable",
        "no_profile_matches_inputs",
    ]


def test_profile_fits_rejects_indices_outside_the_table() -> None:
    table = decode_prefill()
    assert not profile_fits(table, -1, [(1, 1)])
    assert not profile_fits(table, 2, [(1, 1)])
    assert profile_fits(table, 1, [(1, 1)])


def test_rank_must_match_min_and_max() -> None:
    # The extra extent is nonzero so the range comparison alone could not reject it.
    only_max_off = ProfileTable(((ProfileBounds((1, 1), (1, 2048, 4)),),))
    only_min_off = ProfileTable(((ProfileBounds((1, 1, 4), (1, 2048)),),))
    assert not profile_fits(only_max_off, 0, [(1, 8)])
    assert not profile_fits(only_min_off, 0, [(1, 8)])
    assert not profile_fits(only_min_off, 0, [(1, 8, 4)])


def test_request_accepts_numpy_integers() -> None:
    np = pytest.importorskip("numpy")
    request = Request.pinned(np.int64(1))
    assert request == Request.pinned(1)
    assert type(request.index) is int
    assert select_profile(decode_prefill(), request, [(1, 5)]) == Selection(Outcome.OK, 1)


@pytest.mark.parametrize("bad", [True, 1.0, "1", None])
def test_request_rejects_non_integers(bad: object) -> None:
    with pytest.raises(TypeError, match="must be an integer"):
        Request.pinned(bad)


def test_request_kind_is_checked() -> None:
    with pytest.raises(ValueError, match="default, pinned or auto"):
        Request("sometimes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="carries no index"):
        Request("auto", 1)


def test_table_from_bundle_uses_input_order_and_profile_order() -> None:
    from tests.policy.tables import llm_manifest

    table = ProfileTable.from_bundle(llm_manifest())
    assert table.active == 0
    assert table.bounds == (
        (ProfileBounds((1, 1), (1, 1)), ProfileBounds((1, 1), (1, 1))),
        (ProfileBounds((1, 32), (1, 2048)), ProfileBounds((1, 32), (1, 2048))),
    )
