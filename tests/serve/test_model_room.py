"""Which models a service of several unloads to make room (`room_for`, the policy alone):
the least recently used idle ones, only as many as needed, never a busy one, and nothing
when even unloading every idle one would not be enough."""

from __future__ import annotations

from trt_edge_runner.serve.model_set import Loaded, Room, room_for

MIB = 1 << 20


def test_a_model_that_fits_unloads_nothing() -> None:
    assert room_for(10 * MIB, [Loaded("a", 10 * MIB, False)], 30 * MIB) == Room((), True, 20 * MIB)


def test_the_least_recently_used_idle_models_go_first_and_only_as_many_as_needed() -> None:
    loaded = [Loaded("old", 10 * MIB, False), Loaded("mid", 10 * MIB, False),
              Loaded("new", 10 * MIB, False)]  # fmt: skip
    assert room_for(10 * MIB, loaded, 30 * MIB) == Room(("old",), True, 10 * MIB)
    assert room_for(15 * MIB, loaded, 30 * MIB) == Room(("old", "mid"), True, 20 * MIB)


def test_a_busy_model_is_skipped_and_a_model_that_cannot_fit_unloads_nothing() -> None:
    loaded = [Loaded("busy", 10 * MIB, True), Loaded("idle", 10 * MIB, False)]
    assert room_for(10 * MIB, loaded, 20 * MIB) == Room(("idle",), True, 10 * MIB)
    assert room_for(15 * MIB, loaded, 20 * MIB) == Room((), False, 10 * MIB)


def test_a_bundle_without_a_memory_record_counts_nothing() -> None:
    assert room_for(0, [Loaded("a", 20 * MIB, True)], 20 * MIB) == Room((), True, 0)
