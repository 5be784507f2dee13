"""trt-edge-run's fused attention kernel beside ExecuTorch's own, one call at the same shapes.

    .venv/bin/python benchmarks/bench_fused_attention.py [--fills 128,1024,1899] [--slots 2048]
        [--iters 200] [--layers 4] [--seq 1]

A bundle built with `attention: fused` calls `llama::custom_sdpa` once per layer
(docs/fused-attention.md). trt-edge-run carries its own kernel for it
(`device_runner/cpp/runner/fused_attention.cpp`); ExecuTorch's Python runtime and its LLM
runner use the wheel's (`executorch.extension.llm.custom_ops`). This times one decode call
(one query position, Qwen3-0.6B's 16 query heads over 8 KV heads of 128) at each fill of a
`--slots` cache, for both, in one run and on the same thread count (2, as the runner's pool
on this machine): ours through the `trt_edge_fused_attention_bench` binary CMake builds
beside the runner, ExecuTorch's through `torch.ops.llama.custom_sdpa` on torch tensors in
this process. `--layers` caches are visited in turn as a model's layers are, so the cache
a call reads is mostly out of the CPU's caches, as in a real decode step (`--layers 1`: the
same cache every call, hot where it fits). `--seq N` times a prefill chunk instead: N query
positions starting at each fill (`--seq 512 --fills 0,1024 --iters 5 --layers 1`: the chunks
of a long prompt).

Prints medians (ms) and the ratio ExecuTorch ÷ trt-edge (> 1: ours is faster). A figure,
not a test: exits 0 whatever the ratio; 1 only when a side cannot be measured.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

from cpp_build import CPP_BUILD, build_target

BINARY = CPP_BUILD / "trt_edge_fused_attention_bench"
HEADS, KV_HEADS, DIM = 16, 8, 128
THREADS = 2


def ours(seq: int, fill: int, slots: int, iters: int, layers: int) -> float:
    """Median ms of trt-edge-run's kernel for one call of `seq` positions from `fill`."""
    argv = [str(BINARY), str(seq), str(HEADS), str(KV_HEADS), str(DIM), str(slots), str(fill)]
    argv += [str(iters), str(layers)]
    done = subprocess.run(argv, capture_output=True, text=True, check=True)
    return float(json.loads(done.stdout.strip().splitlines()[-1])["median_ms"])


def executorch_kernel(seq: int, fill: int, slots: int, iters: int, layers: int) -> float:
    """Median ms of ExecuTorch's kernel for the same call."""
    import executorch.extension.llm.custom_ops.custom_ops  # noqa: F401  (registers llama::)
    import torch

    torch.manual_seed(0)
    query = torch.randn(1, seq, HEADS, DIM)
    caches = [
        (torch.randn(1, slots, KV_HEADS, DIM), torch.randn(1, slots, KV_HEADS, DIM))
        for _ in range(layers)
    ]
    times = []
    for call in range(iters + 2):  # two warm-up calls, as the binary makes
        key, value = caches[call % layers]
        started = time.perf_counter()
        torch.ops.llama.custom_sdpa(query, key, value, fill, None, 0.0, True, None)
        if call >= 2:
            times.append((time.perf_counter() - started) * 1e3)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fills", default="128,1024,1899")
    parser.add_argument("--slots", type=int, default=2048)
    parser.add_argument("--iters", type=int, default=200)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--seq", type=int, default=1, help="query positions per call (1: decode)")
    args = parser.parse_args()
    fills = [int(f) for f in args.fills.split(",")]
    if args.seq < 1 or any(not 0 <= f <= args.slots - args.seq for f in fills):
        parser.error(f"--fills: each must be in [0, {args.slots - args.seq}] (--seq >= 1)")
    problem = build_target(BINARY.name)
    if problem:
        print(problem, file=sys.stderr)
        return 1
    import torch

    torch.set_num_threads(THREADS)
    what = "decode" if args.seq == 1 else f"prefill ({args.seq} positions from the fill)"
    print(
        f"{what} attention, {HEADS} query heads / {KV_HEADS} KV heads x {DIM}, {args.slots} "
        f"slots, {args.layers} caches in turn, {THREADS} threads, median of {args.iters}"
    )
    print(f"{'fill':>6} {'trt-edge-run ms':>16} {'ExecuTorch ms':>14} {'ET ÷ ours':>10}")
    for fill in fills:
        # Interleaved, each side twice, so a slow spell of the machine hits both.
        mine, theirs = [], []
        for _ in range(2):
            mine.append(ours(args.seq, fill, args.slots, args.iters, args.layers))
            theirs.append(executorch_kernel(args.seq, fill, args.slots, args.iters, args.layers))
        a, b = statistics.median(mine), statistics.median(theirs)
        print(f"{fill:>6} {a:>16.3f} {b:>14.3f} {b / a:>10.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
