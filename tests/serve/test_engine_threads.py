"""`--engine-threads`: auto runs the engine single-threaded on two cores or fewer (its thread
pool would take the core the front end needs for every token), with the pool elsewhere; 1 and
all force either; the choice reaches the engine's command line."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from trt_edge_runner.serve.engine_threads import SMALL_WEIGHTS_BYTES, single_thread, usable_cores

from tests.serve.conftest import Served

SMALL, LARGE = 8 << 20, 2 << 30  # a mini's weights, a 0.6 B model's in fp32


@pytest.mark.parametrize(
    ("choice", "cores", "weights", "want"),
    [
        ("auto", 1, SMALL, True),
        ("auto", 2, SMALL, True),
        ("auto", 2, LARGE, False),  # long steps: the pool's second core wins (docs/serving.md)
        ("auto", 2, SMALL_WEIGHTS_BYTES, False),
        ("auto", 2, None, False),  # a bundle that records no weights: ExecuTorch's default
        ("auto", 4, SMALL, False),
        ("auto", None, SMALL, False),  # unknown cores: ExecuTorch's default
        ("1", 12, LARGE, True),
        ("all", 2, SMALL, False),
    ],
)
def test_engine_threads_choice(
    choice: str, cores: int | None, weights: int | None, want: bool
) -> None:
    assert single_thread(choice, cores, weights) is want


def test_usable_cores_follow_the_affinity_mask() -> None:
    """A service started under `taskset -c 0` (or in a cpuset) counts the cores it may use."""
    allowed = os.sched_getaffinity(0)
    try:
        os.sched_setaffinity(0, {min(allowed)})
        assert usable_cores() == 1
    finally:
        os.sched_setaffinity(0, allowed)
    assert usable_cores() == len(allowed)


@pytest.mark.slow
@pytest.mark.xdist_group("llm-gemma3")
def test_the_choice_reaches_the_engine(
    serve_bundle: Callable[..., Served], mini_bundle: Callable[[str], Path]
) -> None:
    served = serve_bundle(mini_bundle("gemma3"), "--engine-threads", "1")
    argv = Path(f"/proc/{served.engine()}/cmdline").read_bytes().split(b"\0")
    assert b"--single-thread" in argv
    body = {"prompt": [2, 40, 41], "max_tokens": 3, "temperature": 0}
    assert httpx.post(f"{served.url}/v1/completions", json=body, timeout=60).status_code == 200
