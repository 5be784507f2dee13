"""`--engine-threads`: auto runs the engine single-threaded on two cores or fewer (its thread
pool would take the core the front end needs for every token), with the pool elsewhere; 1 and
all force either; the choice reaches the engine's command line."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from trt_edge_runner.commands.serve import single_thread, usable_cores

from tests.serve.conftest import Served


@pytest.mark.parametrize(
    ("choice", "cores", "want"),
    [
        ("auto", 1, True),
        ("auto", 2, True),
        ("auto", 4, False),
        ("auto", None, False),  # unknown: ExecuTorch's default
        ("1", 12, True),
        ("all", 2, False),
    ],
)
def test_engine_threads_choice(choice: str, cores: int | None, want: bool) -> None:
    assert single_thread(choice, cores) is want


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
