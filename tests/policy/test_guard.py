"""Guards: thread-local scoped requests, type rules, phase resolution."""

from __future__ import annotations

import threading

import pytest
from trt_edge_runner.errors import RequestedProfileUnavailableError, UnknownPhaseError
from trt_edge_runner.guard import OptimizationProfileGuard, PhaseGuard, current_request
from trt_edge_runner.policy import Request

from tests.policy.tables import llm_manifest


def test_no_guard_means_default() -> None:
    assert current_request() == Request.default()


def test_guards_nest_and_restore_the_enclosing_request() -> None:
    with OptimizationProfileGuard(1):
        assert current_request() == Request.pinned(1)
        with OptimizationProfileGuard.automatic():
            assert current_request() == Request.auto()
            with OptimizationProfileGuard(0):
                assert current_request() == Request.pinned(0)
            assert current_request() == Request.auto()
        assert current_request() == Request.pinned(1)
    assert current_request() == Request.default()


def test_exception_inside_guard_restores_the_enclosing_request() -> None:
    with OptimizationProfileGuard.automatic():
        with pytest.raises(RuntimeError, match="boom"), OptimizationProfileGuard(2):
            assert current_request() == Request.pinned(2)
            raise RuntimeError("boom")
        assert current_request() == Request.auto()
    assert current_request() == Request.default()


def test_one_guard_object_can_be_reentered() -> None:
    guard = OptimizationProfileGuard(1)
    with guard:
        with OptimizationProfileGuard(0), guard:
            assert current_request() == Request.pinned(1)
        assert current_request() == Request.pinned(1)
    with guard:
        assert current_request() == Request.pinned(1)
    assert current_request() == Request.default()


def test_guard_returns_its_request_from_enter() -> None:
    with OptimizationProfileGuard.automatic() as request:
        assert request == Request.auto()


def test_accepts_numpy_integers() -> None:
    np = pytest.importorskip("numpy")
    for value in (np.int64(2), np.int32(2), np.uint8(2), np.intp(2)):
        with OptimizationProfileGuard(value):
            got = current_request()
            assert got == Request.pinned(2)
            assert type(got.index) is int


@pytest.mark.parametrize("bad", [True, False, 1.0, 0.0, "1", None, [1]])
def test_rejects_bool_and_non_integers_with_type_error(bad: object) -> None:
    with pytest.raises(TypeError, match="must be an integer"):
        OptimizationProfileGuard(bad)  # type: ignore[arg-type]


def test_rejects_numpy_bool_and_float() -> None:
    np = pytest.importorskip("numpy")
    for bad in (np.bool_(True), np.float64(1.0)):
        with pytest.raises(TypeError, match="must be an integer"):
            OptimizationProfileGuard(bad)


def test_negative_index_is_rejected_at_construction() -> None:
    with pytest.raises(ValueError, match=r"-1.*automatic\(\)"):
        OptimizationProfileGuard(-1)
    assert current_request() == Request.default()


def test_threads_never_see_each_others_requests() -> None:
    # Real threads, all holding different guards at the same time; the barrier
    # makes the overlap certain rather than likely.
    plan: list[OptimizationProfileGuard] = [
        OptimizationProfileGuard(0),
        OptimizationProfileGuard(1),
        OptimizationProfileGuard(2),
        OptimizationProfileGuard.automatic(),
    ]
    barrier = threading.Barrier(len(plan) + 1)
    seen: dict[int, list[Request]] = {}

    def work(slot: int, guard: OptimizationProfileGuard) -> None:
        observed = [current_request()]
        with guard:
            barrier.wait()  # every thread is inside its guard
            for _ in range(2000):
                observed.append(current_request())
            barrier.wait()  # nobody leaves before all have looked
        observed.append(current_request())
        seen[slot] = observed

    threads = [threading.Thread(target=work, args=(i, g)) for i, g in enumerate(plan)]
    with OptimizationProfileGuard(7):
        for t in threads:
            t.start()
        barrier.wait()
        assert current_request() == Request.pinned(7)
        barrier.wait()
        for t in threads:
            t.join()
        assert current_request() == Request.pinned(7)
    for slot, guard in enumerate(plan):
        observed = seen[slot]
        assert observed[0] == Request.default()  # a new thread starts with no guard
        assert set(observed[1:-1]) == {guard.request}
        assert observed[-1] == Request.default()


def test_phase_guard_resolves_pinned_and_auto_phases() -> None:
    manifest = llm_manifest({"decode": 0, "prefill": 1, "chat": "auto"})
    with PhaseGuard(manifest.runtime, "prefill"):
        assert current_request() == Request.pinned(1)
        with PhaseGuard(manifest.runtime, "chat"):
            assert current_request() == Request.auto()
        with PhaseGuard(manifest.runtime, "decode") as request:
            assert request == Request.pinned(0)
    assert current_request() == Request.default()


def test_unknown_phase_names_the_phases_that_exist() -> None:
    manifest = llm_manifest()
    with pytest.raises(UnknownPhaseError, match=r"'generate'.*'decode', 'prefill'"):
        PhaseGuard(manifest.runtime, "generate")


def test_phase_with_negative_index_is_unavailable() -> None:
    manifest = llm_manifest({"decode": -1})
    with pytest.raises(RequestedProfileUnavailableError, match=r"phase 'decode' pins profile -1"):
        PhaseGuard(manifest.runtime, "decode")
