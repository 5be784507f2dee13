"""Build figures (issue 4): cold build per stage, warm rebuild ÷ cold, per-phase .pte vs eager.

    .venv/bin/python benchmarks/bench_build.py [--examples tiny_llm vision] [--repeat N]

Cold: a fresh, empty cache dir (every stage runs). Warm: the same build again
with that cache (the goal is warm/cold <= 0.05). Latency: each phase of each
example runs through the real runner (ExecuTorch, XNNPACK on this CPU) and the
eager PyTorch model on the same inputs, measured side by side in this process;
the ratio .pte/eager is printed per phase (below 1 means the .pte is faster).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import warnings
from pathlib import Path

from timing import median_seconds

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"

# Per example: phase -> symbol values for the measured inputs (each profile's opt).
PHASE_SHAPES: dict[str, dict[str, dict[str, int]]] = {
    "tiny_llm": {"prefill": {"seq": 128}, "decode": {"seq": 1}},
    "vision": {"infer": {"batch": 16}},
}


def bench_example(example: str, repeat: int) -> None:
    import torch
    from trt_edge.pipeline.load_model import load_model
    from trt_edge.pipeline.plan import sample_inputs
    from trt_edge.pipeline.run import BuildOptions, build, load
    from trt_edge_runner.runner import Runner

    manifest_path = EXAMPLES / example / "manifest.yaml"
    with tempfile.TemporaryDirectory(prefix="bench-build-") as tmp:
        options = BuildOptions(out_dir=Path(tmp) / "out", cache_dir=Path(tmp) / "cache")
        started = time.perf_counter()
        cold = build(manifest_path, options)
        cold_total = time.perf_counter() - started
        started = time.perf_counter()
        warm = build(manifest_path, options)
        warm_total = time.perf_counter() - started
        stages = ", ".join(f"{k} {v:.2f}s" for k, v in cold.stage_seconds.items())
        print(f"{example}: cold build {cold_total:.2f}s ({stages})")
        print(
            f"{example}: warm rebuild {warm_total:.3f}s; warm/cold = "
            f"{warm_total / cold_total:.4f} (goal <= 0.05); cached: "
            + ", ".join(k for k, v in warm.cached.items() if v)
        )
        manifest = load(manifest_path)
        module = load_model(manifest).module
        runner = Runner.open(cold.bundle_dir)
        for phase, symbols in PHASE_SHAPES[example].items():
            arrays = sample_inputs(manifest.inputs, symbols, seed=1)
            tensors = [torch.from_numpy(a) for a in arrays]
            pte = median_seconds(lambda: runner.run(phase, arrays), repeat, warmup=True)  # noqa: B023

            def eager() -> None:
                with torch.no_grad():
                    module(*tensors)  # noqa: B023

            ref = median_seconds(eager, repeat, warmup=True)
            dims = " ".join(f"{k}={v}" for k, v in symbols.items())
            print(
                f"{example}: phase {phase} ({dims}, profile {runner.last_profile}): "
                f".pte {pte * 1e3:.2f} ms, eager {ref * 1e3:.2f} ms, ratio {pte / ref:.2f}"
            )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", nargs="+", default=list(PHASE_SHAPES), choices=PHASE_SHAPES)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    import logging

    import structlog
    from trt_edge.library_noise import quiet_library_noise

    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    with quiet_library_noise():  # as `trt-edge build` does
        for example in args.examples:
            bench_example(example, args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
