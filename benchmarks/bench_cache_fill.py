"""Decode cost vs `max_cache_len` at the same fill: attention over every slot vs the filled ones.

    .venv/bin/python benchmarks/bench_cache_fill.py [--work DIR] [--rounds 3] [--steps 20]
        [--layers 4] [--fill 128] [--modes all,filled,fused] [--lengths 256,4096]

Issue 19, point 3. A Qwen3-0.6B-shaped config cut to `--layers` layers (vocab 151,936,
hidden 1,024, 16 heads, 8 KV heads, head_dim 128, tied embeddings; random weights made
by transformers from the config with a fixed seed, nothing downloaded) goes through the
recipe's own parts — the export wrapper (`StaticCacheLM`), its attention and rewrites,
torch.export, the recipe's XNNPACK lowering — once per attention mode and `--lengths` value:
`all` (every slot), `filled` (the window input) and `fused` (one operator reading the cache in
place, `docs/fused-attention.md`), by default each at `max_cache_len` 256 and 4,096. The
validation stage is skipped (the tests prove exactness on the minis; here a check prints
how far each program's logits are from the `all`/256 one's at the same call).

Each program then runs in a fresh process (ExecuTorch's Python runtime): a `--fill`-token
prompt (in calls of at most 128), then `--steps` decode calls at position `--fill` (the same slot
rewritten: every step costs the same), timed one by one; the round's figure is their
median. Rounds interleave the programs; the printed figure is the median over rounds.
Goal (issue 19): decode at fill 128 with 4,096 slots <= 1.1 x the same at 256.

Figures, never asserted. RAM: one program (about 1.7 GB of weights and constants in its
.pte at this shape) at a time; the machine is shared, so the load average is printed too.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
LENGTHS = (256, 4096)
MODES = ("all", "filled", "fused")
PROMPT = 128
SEED = 0


def qwen3_config(layers: int) -> Any:
    from transformers import Qwen3Config

    return Qwen3Config(  # type: ignore[call-arg]  # rope_theta: accepted as a kwarg
        vocab_size=151_936,
        hidden_size=1024,
        intermediate_size=3072,
        num_hidden_layers=layers,
        num_attention_heads=16,
        num_key_value_heads=8,
        head_dim=128,
        max_position_embeddings=40_960,
        tie_word_embeddings=True,
        rope_theta=1_000_000.0,
    )


def build_program(out: Path, mode: str, max_cache_len: int, layers: int) -> dict[str, Any]:
    """The `.pte` of the recipe's wrapper over the random-weight model (one process)."""
    import torch
    from torch.export import Dim
    from transformers import Qwen3ForCausalLM
    from trt_edge.library_noise import quiet_library_noise
    from trt_edge.llm.attention import (
        ATTENTION_NAME,
        FUSED_ATTENTION_NAME,
        load_fused_attention_op,
        register_attention,
    )
    from trt_edge.llm.lowering import causal_lm_recipe
    from trt_edge.llm.rewrites import LastPositionHead, add_rotation_buffer, rotate_half_as_matmul
    from trt_edge.llm.static_cache import StaticCacheLM
    from trt_edge.pipeline.lower.executorch_cpu import lower_with

    torch.manual_seed(SEED)
    with quiet_library_noise():
        model: Any = Qwen3ForCausalLM(qwen3_config(layers))
        model.eval()
        register_attention()
        fused = mode == "fused"
        if fused:
            load_fused_attention_op()
        model.set_attn_implementation(FUSED_ATTENTION_NAME if fused else ATTENTION_NAME)
        model.lm_head = LastPositionHead(model.lm_head)
        windowed = mode == "filled"
        wrapper = StaticCacheLM(model, max_cache_len, windowed=windowed, fused=fused)
        add_rotation_buffer(wrapper, 128, torch.float32)
        wrapper.eval()
        seq = Dim("seq", min=1, max=PROMPT)
        args: tuple[Any, ...] = (torch.zeros(1, PROMPT, dtype=torch.int64), torch.arange(PROMPT))
        shapes: tuple[Any, ...] = ({1: seq}, {0: seq})
        if windowed:
            args += (torch.arange(max_cache_len),)
            shapes += ({0: Dim("window", min=1, max=max_cache_len)},)
        started = time.perf_counter()
        with torch.no_grad(), rotate_half_as_matmul(wrapper.model, wrapper):
            program = torch.export.export(wrapper, args, dynamic_shapes=shapes, strict=False)
        exported = time.perf_counter()
        del model, wrapper
        from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner

        pte = lower_with(program, [XnnpackPartitioner()], "xnnpack", causal_lm_recipe("xnnpack"))
    out.write_bytes(pte)
    return {
        "export_s": round(exported - started, 1),
        "lower_s": round(time.perf_counter() - exported, 1),
        "pte_mb": round(len(pte) / 1e6, 1),
    }


def window_for(mode: str, max_cache_len: int, end: int) -> int | None:
    """The window the runtime feeds (the bundle's rule, `LlmSection.window_length`)."""
    if mode != "filled":
        return None
    from trt_edge.llm.section import WINDOW_BUCKET

    return min(max_cache_len, -(-end // WINDOW_BUCKET) * WINDOW_BUCKET)


def time_program(
    pte: Path, mode: str, max_cache_len: int, fill: int, steps: int, logits_out: Path
) -> dict[str, Any]:
    """One round in this process: prompt, then `steps` timed decode calls at `fill`."""
    import numpy as np
    import torch
    from executorch.runtime import Runtime

    if mode == "fused":
        from trt_edge.llm.attention import load_fused_attention_op

        load_fused_attention_op()
    method = Runtime.get().load_program(str(pte)).load_method("forward")
    rng = np.random.default_rng(SEED)
    prompt = torch.from_numpy(rng.integers(0, 151_936, size=(1, fill)).astype(np.int64))

    def call(ids: torch.Tensor, start: int) -> Any:
        inputs = [ids, torch.arange(start, start + ids.shape[1])]
        window = window_for(mode, max_cache_len, start + ids.shape[1])
        if window is not None:
            inputs.append(torch.arange(window))
        return method.execute(inputs)[0]

    for start in range(0, fill, PROMPT):  # the export takes at most PROMPT tokens a call
        call(prompt[:, start : start + PROMPT], start)
    token = torch.tensor([[int(rng.integers(0, 151_936))]])
    samples, logits = [], None
    for _ in range(steps + 1):  # the first is a warm-up (shape change: delegates re-plan)
        started = time.perf_counter()
        logits = call(token, fill)
        samples.append(time.perf_counter() - started)
    np.save(logits_out, np.asarray(logits))
    return {"ms": 1e3 * statistics.median(samples[1:])}


def child(argv: list[str]) -> int:
    """`--child build|time ...`: one step in a fresh process, JSON on stdout."""
    kind, pte, mode, length = argv[0], Path(argv[1]), argv[2], int(argv[3])
    if kind == "build":
        doc = build_program(pte, mode, length, int(argv[4]))
    else:
        doc = time_program(pte, mode, length, int(argv[4]), int(argv[5]), Path(argv[6]))
    print(json.dumps(doc))
    return 0


def run_child(*args: object) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": f"{REPO / 'sdk'}:{REPO / 'device_runner'}"}
    argv = [sys.executable, __file__, "--child", *map(str, args)]
    done = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0:
        sys.stderr.write(done.stderr[-4000:])
        raise SystemExit(f"child {args[:4]} failed ({done.returncode})")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        return child(sys.argv[2:])
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/trt-edge-bench-cache-fill"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--fill", type=int, default=PROMPT, help="prompt tokens before decode")
    parser.add_argument(
        "--lengths",
        default=",".join(map(str, LENGTHS)),
        help="max_cache_len values, comma-separated (default 256,4096; each must exceed --fill)",
    )
    parser.add_argument(
        "--modes",
        default=",".join(MODES),
        help="attention modes to build and time, comma-separated (default: all,filled,fused); "
        "one mode alone is enough when only its 4,096/256 ratio is wanted",
    )
    args = parser.parse_args()
    modes = tuple(m for m in args.modes.split(",") if m)
    if not modes or any(m not in MODES for m in modes):
        parser.error(f"--modes: expected a comma-separated subset of {','.join(MODES)}")
    import numpy as np

    args.work.mkdir(parents=True, exist_ok=True)
    lengths = tuple(int(n) for n in args.lengths.split(",") if n)
    if not lengths or min(lengths) <= args.fill:
        parser.error("--lengths: every max_cache_len must exceed --fill")
    configs = [(mode, length) for mode in modes for length in lengths]
    for mode, length in configs:
        pte = args.work / f"{mode}-{length}-L{args.layers}.pte"
        if not pte.is_file():
            built = run_child("build", pte, mode, length, args.layers)
            print(f"built {pte.name}: {built}", flush=True)
    times: dict[tuple[str, int], list[float]] = {c: [] for c in configs}
    for round_index in range(args.rounds):
        for mode, length in configs:
            pte = args.work / f"{mode}-{length}-L{args.layers}.pte"
            logits = args.work / f"{mode}-{length}.npy"
            doc = run_child("time", pte, mode, length, args.fill, args.steps, logits)
            times[(mode, length)].append(doc["ms"])
        print(f"round {round_index + 1}: load average {os.getloadavg()[0]:.1f}", flush=True)
    # Logits are compared with the first mode's at the first length (`all` at 256 by default).
    reference = np.load(args.work / f"{modes[0]}-{lengths[0]}.npy")
    median = {c: statistics.median(v) for c, v in times.items()}
    print(
        f"\ndecode ms/token at fill {args.fill}, {args.layers} layers, medians of "
        f"{args.rounds} rounds x {args.steps} steps"
    )
    ratio = f"{lengths[-1]}/{lengths[0]}"
    print(
        f"{'attention':<10}"
        + "".join(f"{f'{n:,} slots':>14}" for n in lengths)
        + f"{ratio:>11}{'max |dlogit|':>15}"
    )
    for mode in modes:
        diff = max(
            float(np.abs(np.load(args.work / f"{mode}-{n}.npy") - reference).max()) for n in lengths
        )
        row = "".join(f"{median[(mode, n)]:>14.2f}" for n in lengths)
        spread = median[(mode, lengths[-1])] / median[(mode, lengths[0])]
        print(f"{mode:<10}{row}{spread:>11.2f}{diff:>15.2e}")
    for other in modes[1:]:
        for n in lengths:
            speedup = median[(modes[0], n)] / median[(other, n)]
            print(f"{other} vs {modes[0]} at {n:,} slots: x{speedup:.2f} faster")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
