"""Turn-taking in front of one engine: one request holds it, `max_queue` wait in order, the
next is refused at once with 503 and Retry-After; a deadline passed while waiting is a 504;
drain returns once nothing holds or waits for a turn."""

from __future__ import annotations

import asyncio
import time

import pytest
from trt_edge_runner.serve.api_errors import ApiError
from trt_edge_runner.serve.scheduler import Scheduler


async def hold(scheduler: Scheduler, release: asyncio.Event, order: list[int], n: int) -> None:
    async with scheduler.turn(scheduler.deadline()):
        order.append(n)
        await release.wait()


def test_requests_past_the_queue_get_503_with_retry_after() -> None:
    async def scenario() -> tuple[list[int], ApiError, list[int]]:
        depths: list[int] = []
        full = asyncio.Event()

        def on_depth(depth: int) -> None:
            depths.append(depth)
            if scheduler.active == 3 and depth == 2:  # one runs, two wait
                full.set()

        scheduler = Scheduler(max_queue=2, timeout_s=30, on_depth=on_depth)
        release = asyncio.Event()
        order: list[int] = []
        tasks = [asyncio.create_task(hold(scheduler, release, order, n)) for n in range(3)]
        await asyncio.wait_for(full.wait(), 10)
        with pytest.raises(ApiError) as caught:
            async with scheduler.turn(scheduler.deadline()):
                pass
        release.set()
        await asyncio.gather(*tasks)
        return order, caught.value, depths

    order, error, depths = asyncio.run(scenario())
    assert order == [0, 1, 2]  # first come, first served
    assert error.status == 503 and error.outcome == "rejected"
    assert error.headers["Retry-After"].isdigit()
    # Admitted: at most one running plus max_queue waiting (briefly all three wait at once).
    assert max(depths) <= 3 and depths[-1] == 0


def test_a_deadline_passed_in_the_queue_is_a_504_and_frees_the_place() -> None:
    async def scenario() -> tuple[ApiError, int]:
        held = asyncio.Event()
        scheduler = Scheduler(
            max_queue=4,
            timeout_s=0.1,
            on_depth=lambda depth: held.set() if scheduler.active == 1 and depth == 0 else None,
        )  # `held`: the one request holds the engine (admitted, not waiting)
        release = asyncio.Event()
        holder = asyncio.create_task(hold(scheduler, release, [], 0))
        await asyncio.wait_for(held.wait(), 10)
        with pytest.raises(ApiError) as caught:
            async with scheduler.turn(time.monotonic() + 0.05):
                pass
        waiting = scheduler.waiting
        release.set()
        await holder
        await asyncio.wait_for(scheduler.drain(), 1.0)
        return caught.value, waiting

    error, waiting = asyncio.run(scenario())
    assert error.status == 504 and error.outcome == "deadline"
    assert waiting == 0


def test_a_slots_engine_is_held_by_as_many_requests_as_it_has_slots() -> None:
    """`slots` 2: two requests hold turns at once, `max_queue` wait behind them, the next gets
    503; drain waits for both holders."""

    async def scenario() -> tuple[list[int], ApiError, bool]:
        two_hold = asyncio.Event()
        scheduler = Scheduler(
            max_queue=1,
            timeout_s=30,
            on_depth=lambda depth: two_hold.set() if scheduler.active == 3 else None,
            slots=2,
        )
        release = asyncio.Event()
        order: list[int] = []
        tasks = [asyncio.create_task(hold(scheduler, release, order, n)) for n in range(3)]
        await asyncio.wait_for(two_hold.wait(), 10)
        while len(order) < 2:
            await asyncio.sleep(0)
        assert order == [0, 1] and scheduler.waiting == 1
        with pytest.raises(ApiError) as caught:
            async with scheduler.turn(scheduler.deadline()):
                pass
        drained = asyncio.create_task(scheduler.drain())
        await asyncio.sleep(0)
        waited = not drained.done()
        release.set()
        await asyncio.gather(*tasks)
        await asyncio.wait_for(drained, 1.0)
        return order, caught.value, waited

    order, error, waited = asyncio.run(scenario())
    assert order == [0, 1, 2]
    assert error.status == 503
    assert waited
