"""Thread safety: guards are per thread, one Runner serialises its executions."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from trt_edge_runner.policy import Request
from trt_edge_runner.runner import Runner

from tests.helpers.bundles import VOCAB, eager

pytestmark = pytest.mark.slow

SCALE = np.array([1.5], dtype=np.float32)


def test_threads_sharing_one_runner_each_get_their_own_phase(
    llm_like_bundle: Path, tiny_model: Any
) -> None:
    runner = Runner.open(llm_like_bundle)
    plan = {"prefill": (1, 24), "decode": (0, 1)}
    errors: list[BaseException] = []
    barrier = threading.Barrier(4)

    def worker(phase: str, seed: int) -> None:
        expected_profile, seq = plan[phase]
        rng = np.random.default_rng(seed)
        try:
            barrier.wait()
            with runner.phase(phase):
                for _ in range(15):
                    ids = rng.integers(0, VOCAB, size=(1, seq), dtype=np.int64)
                    result = runner.execute([ids, SCALE])
                    assert result.profile == expected_profile
                    np.testing.assert_allclose(
                        result.outputs[0], eager(tiny_model, ids, SCALE), atol=1e-5
                    )
        except BaseException as exc:  # collected and re-raised in the main thread
            errors.append(exc)

    threads = [
        threading.Thread(target=worker, args=(phase, i))
        for i, phase in enumerate(["prefill", "decode", "prefill", "decode"])
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_a_guard_in_one_thread_is_invisible_to_another(llm_like_bundle: Path) -> None:
    runner = Runner.open(llm_like_bundle)
    inside = threading.Event()
    release = threading.Event()
    seen: dict[str, Any] = {}

    def holder() -> None:
        with runner.phase("prefill"):
            inside.set()
            release.wait(timeout=30)
            seen["holder"] = runner.execute([np.zeros((1, 5), np.int64), SCALE]).request

    thread = threading.Thread(target=holder)
    thread.start()
    assert inside.wait(timeout=30)
    try:
        seen["main"] = runner.execute([np.zeros((1, 1), np.int64), SCALE]).request
    finally:
        release.set()
        thread.join()
    assert seen["main"] == Request.default()
    assert seen["holder"] == Request.pinned(1)


def test_one_runner_per_thread_runs_independently(llm_like_bundle: Path, tiny_model: Any) -> None:
    runners = [Runner.open(llm_like_bundle) for _ in range(2)]
    errors: list[BaseException] = []

    def worker(runner: Runner, seq: int) -> None:
        rng = np.random.default_rng(seq)
        try:
            for _ in range(10):
                ids = rng.integers(0, VOCAB, size=(1, seq), dtype=np.int64)
                result = runner.run(Request.auto(), [ids, SCALE])
                np.testing.assert_allclose(
                    result.outputs[0], eager(tiny_model, ids, SCALE), atol=1e-5
                )
        except BaseException as exc:
            errors.append(exc)

    threads = [
        threading.Thread(target=worker, args=(r, s)) for r, s in zip(runners, (1, 30), strict=True)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert [r.last_profile for r in runners] == [0, 1]
