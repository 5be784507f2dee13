"""How many threads the engine's CPU kernels get: ExecuTorch's pool, or the engine's own one.

Every streamed token wakes the service's front end (read the engine's line, detokenize, send
an SSE event: about 0.5 ms of a core). On a machine with two cores, ExecuTorch's thread pool
takes both for every decode step, and the front end's wake-ups then interrupt it mid-step.
What wins depends on how long a step is, measured on this project's 2-core machine
(docs/serving.md): on the mini Gemma-3 (a few MB of weights, ~2 ms steps) the engine on one
thread served ~1.6x the tokens/s of the pool; on a Qwen3-0.6B-shaped fp32 bundle (2.4 GB,
~120 ms steps) the pool served 8.4 tokens/s against 5.8 on one thread. So `auto` keeps the
pool unless the service may use two cores or fewer *and* the bundle's weights are small
(below `SMALL_WEIGHTS_BYTES`, a judgement between those two measurements); a bundle that
records no weights keeps the pool (ExecuTorch's default).
"""

from __future__ import annotations

import os

SMALL_WEIGHTS_BYTES = 128 << 20
CHOICES = ("auto", "1", "all")


def usable_cores() -> int | None:
    """The cores this process may run on (a cpuset or `taskset` counts, not the machine's)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count()


def single_thread(choice: str, cores: int | None, weights_bytes: int | None) -> bool:
    """Whether the engine runs `--single-thread` for a bundle of `weights_bytes` of weights."""
    if choice == "auto":
        return (
            cores is not None
            and cores <= 2
            and weights_bytes is not None
            and weights_bytes < SMALL_WEIGHTS_BYTES
        )
    return choice == "1"
