"""Hugging Face recipe figures (issue 13), measured side by side in one run.

    .venv/bin/python benchmarks/bench_llm.py [--work DIR] [--rounds 3] [--steps 40] [--skip-builds]
        [--runner PATH]   # trt-edge-run (default $TRT_EDGE_RUN, else the make test-cpp build)

All on the upstream seed's mini Gemma-3 (examples/gemma3: hidden 320, 3 layers,
vocab 2048, sliding + full attention), written fresh by the example's script:

1. Decode latency per token at `max_cache_len` 256 vs 2048 (two bundles of the same
   model, Python runner, interleaved round by round), and the bytes that cross the
   method boundary per decode step: measured for the recipe (the arrays passed and
   returned), from the I/O contract for the tiny-LLM's caller-owned cache, and what
   a caller-owned cache of *this* model would copy at each length.
2. Time to first token and tokens/s for one prompt: the bundle through the C++ runner
   (`trt-edge-run --generate`, what a device runs: its own JSON timings, and apart from
   them the whole process's wall time, start + integrity check + load included) vs the
   bundle through the Python runner (`trt_edge.llm.generation`, what `trt-edge generate`
   runs) vs eager transformers `generate(do_sample=False)`, interleaved round by round.
3. Cold build per stage, before (the seed as a plain `use_cache=False` model through
   `entrypoint`, as issue 13 describes it) and after (the recipe), each in a fresh
   process with an empty stage cache; then the recipe again with that cache (warm).
   Goals: cold <= 90 s, warm / cold <= 0.05.

Figures, never asserted. The machine is shared: the load average is printed with them.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "examples" / "gemma3"
PROMPT_LEN = 32
NEW_TOKENS = 32

RECIPE_MANIFEST = """\
apiVersion: trt-edge/v1
kind: Model
metadata: {{name: {name}, version: 0.1.0}}
model:
  huggingface: {{path: ./mini-gemma3, max_cache_len: {max_cache_len}}}
profiles:
  - {{name: decode, dims: {{seq: 1}}}}
  - {{name: prefill, dims: {{seq: {{min: 2, opt: 128, max: 256}}}}}}
runtime: {{policy: pinned, phases: {{prefill: prefill, decode: decode}}}}
build: {{backend: xnnpack, targets: [cpu-x86_64]}}
"""

# The seed as issue 13 found it: last-position logits of a use_cache=False model.
SEED_MODEL = '''\
"""The seed's mini Gemma-3, use_cache=False, last-position logits (issue 13's "before")."""
from pathlib import Path

import torch
from torch import nn


class LastLogits(nn.Module):
    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        return self.model(input_ids=input_ids, use_cache=False).logits[:, -1, :]


def build_model() -> nn.Module:
    from transformers import AutoModelForCausalLM

    folder = Path(__file__).parent / "mini-gemma3"
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32)
    model.config.use_cache = False
    return LastLogits(model.eval())
'''

SEED_MANIFEST = """\
apiVersion: trt-edge/v1
kind: Model
metadata: {name: seed-gemma3, version: 0.1.0}
model:
  entrypoint: model.py:build_model
inputs:
  - {name: input_ids, dtype: int64, shape: [1, seq], values: [0, 2048]}
profiles:
  - {name: decode, dims: {seq: 1}}
  - {name: prefill, dims: {seq: {min: 1, opt: 128, max: 256}}}
runtime: {policy: pinned, phases: {prefill: prefill, decode: decode}}
build: {backend: xnnpack, targets: [cpu-x86_64]}
"""

# One build in a fresh process: what a user's `trt-edge build` pays, imports included.
ONE_BUILD = """\
import json, sys, time
started = time.perf_counter()
from pathlib import Path
from trt_edge.library_noise import quiet_library_noise
from trt_edge.pipeline.run import BuildOptions, build
options = BuildOptions(out_dir=Path(sys.argv[2]), cache_dir=Path(sys.argv[3]))
with quiet_library_noise():
    result = build(Path(sys.argv[1]), options)
doc = json.loads((result.bundle_dir / "bundle.json").read_bytes())
print(json.dumps({"stages": result.stage_seconds, "cached": result.cached,
                  "delegates": len(doc["delegates"]), "wall": time.perf_counter() - started,
                  "bundle": str(result.bundle_dir)}))
"""


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} cores"


def write_seed_folder(work: Path) -> Path:
    """The example's own writer: deterministic, so a rerun finds the same bytes (cache hits)."""
    folder = work / "mini-gemma3"
    if not (folder / "model.safetensors").is_file():
        subprocess.run([sys.executable, str(EXAMPLE / "write_model.py"), str(folder)], check=True)
    return folder


def run_build(manifest: Path, out: Path, cache: Path) -> dict[str, Any]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(
        [sys.executable, "-c", ONE_BUILD, str(manifest), str(out), str(cache)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        sys.exit(f"build of {manifest} failed:\n{done.stderr[-3000:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    result["cpu"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return result


def recipe_bundle(work: Path, max_cache_len: int) -> Path:
    project = work / f"cache{max_cache_len}"
    project.mkdir(parents=True, exist_ok=True)
    link = project / "mini-gemma3"
    if not link.exists():
        link.symlink_to(work / "mini-gemma3", target_is_directory=True)
    manifest = project / "manifest.yaml"
    manifest.write_text(
        RECIPE_MANIFEST.format(name=f"gemma3-c{max_cache_len}", max_cache_len=max_cache_len)
    )
    return Path(run_build(manifest, project / "out", work / "stage-cache")["bundle"])


# ---- 1. decode latency vs max_cache_len, bytes across the boundary -----------------------
def decode_round(bundle: Path, steps: int) -> tuple[list[float], int]:
    import numpy as np
    from trt_edge_runner.runner import Runner

    runner = Runner.open(bundle)
    ids = np.random.default_rng(0).integers(4, 2048, size=(1, PROMPT_LEN)).astype(np.int64)
    logits = runner.run("prefill", [ids, np.arange(PROMPT_LEN, dtype=np.int64)]).outputs[0]
    times, crossing = [], 0
    for step in range(steps):
        token = np.asarray([[int(logits.argmax())]], dtype=np.int64)
        position = np.asarray([PROMPT_LEN + step], dtype=np.int64)
        started = time.perf_counter()
        logits = runner.run("decode", [token, position]).outputs[0]
        times.append(time.perf_counter() - started)
        crossing = token.nbytes + position.nbytes + logits.nbytes
    return times[3:], crossing  # the first calls pay allocation and kernel set-up


def caller_owned_bytes() -> tuple[int, int]:
    """The tiny-LLM's decode step from its I/O contract: inputs, and outputs (logits + caches)."""
    from trt_edge.manifest import load_manifest_or_raise
    from trt_edge_runner.dtypes import dtype_info

    manifest = load_manifest_or_raise(REPO / "examples" / "tiny_llm" / "manifest.yaml")
    sizes = []
    for spec in manifest.inputs:
        count = 1
        for d in spec.dims_for({"seq": 1}):
            count *= d
        info = dtype_info(spec.dtype)
        assert info is not None
        sizes.append(count * info.itemsize)
    caches = sum(sizes[2:])
    logits = 1 * 1 * 256 * 4  # [1, seq=1, vocab 256] float32
    return sum(sizes) + logits + caches, caches


def bench_decode(work: Path, rounds: int, steps: int) -> None:
    bundles = {n: recipe_bundle(work, n) for n in (256, 2048)}
    samples: dict[int, list[float]] = {n: [] for n in bundles}
    crossing: dict[int, int] = {}
    for _ in range(rounds):
        for n, bundle in bundles.items():
            times, crossing[n] = decode_round(bundle, steps)
            samples[n] += times
    print(f"\n1. decode per token vs max_cache_len (seed mini Gemma-3, Python runner; {load()})")
    for n, times in samples.items():
        ordered = sorted(times)
        p90 = ordered[int(0.9 * (len(ordered) - 1))]
        print(
            f"   max_cache_len {n:5d}: median {statistics.median(times) * 1e3:.3f} ms, p90 "
            f"{p90 * 1e3:.3f} ms ({len(times)} calls); bytes across the boundary per decode "
            f"step {crossing[n]} B"
        )
    ratio = statistics.median(samples[2048]) / statistics.median(samples[256])
    print(f"   2048 / 256 latency ratio: {ratio:.2f} (attention still runs over every slot)")
    total, caches = caller_owned_bytes()
    print(
        f"   tiny-LLM caller-owned contract (examples/tiny_llm, cache 640 slots): {total} B per "
        f"decode step ({caches} B of caches in, the same out)"
    )
    per_slot = 2 * 3 * 1 * 80 * 4  # k+v, 3 layers, 1 KV head, head_dim 80, float32
    for n in bundles:
        print(
            f"   this model with a caller-owned cache at {n}: {2 * per_slot * n} B per decode "
            f"step (computed: caches in and out), vs {crossing[n]} B with the recipe"
        )


# ---- 2. time to first token, tokens/s -------------------------------------------------------
def cpp_generate(runner: Path, bundle: Path, prompt: list[int]) -> tuple[dict[str, Any], float]:
    """`trt-edge-run --generate --json` in a fresh process: its document and the process's
    wall time (start, bundle.json, sha256 of the files, program load, generation, exit)."""
    argv = [str(runner), "generate", "--bundle", str(bundle), "--json"]
    argv += ["--prompt-ids", ",".join(map(str, prompt)), "--max-new-tokens", str(NEW_TOKENS)]
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"{runner} --generate failed (exit {done.returncode}):\n{done.stderr[-2000:]}")
    doc: dict[str, Any] = json.loads(done.stdout)
    return doc, wall


def bench_generate(work: Path, bundle: Path, rounds: int, runner: Path) -> None:
    import numpy as np
    import torch
    import transformers
    from transformers.utils import logging
    from trt_edge.llm.generation import greedy_generate
    from trt_edge_runner.runner import Runner

    hf_logging: Any = logging
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    prompt = [int(t) for t in np.random.default_rng(1).integers(4, 2048, size=PROMPT_LEN)]
    hf: Any = transformers  # untyped for mypy's strict mode
    model = hf.AutoModelForCausalLM.from_pretrained(work / "mini-gemma3", dtype=torch.float32)
    model.eval()
    ids = torch.tensor([prompt])
    mask = torch.ones_like(ids)

    def eager(new_tokens: int) -> float:
        config = hf.GenerationConfig(do_sample=False, max_new_tokens=new_tokens, eos_token_id=None)
        started = time.perf_counter()
        with torch.no_grad():
            model.generate(ids, attention_mask=mask, generation_config=config)
        return time.perf_counter() - started

    python_runner = Runner.open(bundle)
    cpp, py, hf_row = "bundle, C++ runner", "bundle, Python runner", "eager transformers generate"
    rows: dict[str, dict[str, list[float]]] = {name: {"ttft": [], "tps": []} for name in (cpp, py)}
    rows[hf_row] = {"ttft": [], "tps": []}
    process: dict[str, list[float]] = {"wall": [], "tps": []}
    eager(2)  # warm-up all three (the C++ run also warms the page cache for its load)
    greedy_generate(python_runner, prompt, 2)
    first, _ = cpp_generate(runner, bundle, prompt)
    reference = greedy_generate(python_runner, prompt, NEW_TOKENS)
    if first["tokens"] != reference.tokens:
        sys.exit(f"C++ tokens {first['tokens']} differ from Python's {reference.tokens}")
    for _ in range(rounds):
        doc, wall = cpp_generate(runner, bundle, prompt)
        rows[cpp]["ttft"].append(doc["timings"]["time_to_first_token_ms"] / 1e3)
        rows[cpp]["tps"].append(doc["timings"]["tokens_per_s"])
        process["wall"].append(wall)
        process["tps"].append(len(doc["tokens"]) / wall)
        result = greedy_generate(python_runner, prompt, NEW_TOKENS)
        rows[py]["ttft"].append(result.first_token_s)
        rows[py]["tps"].append(len(result.tokens) / result.total_s)
        rows[hf_row]["ttft"].append(eager(1))
        rows[hf_row]["tps"].append(NEW_TOKENS / eager(NEW_TOKENS))
    print(
        f"\n2. prompt {PROMPT_LEN} tokens, {NEW_TOKENS} new (seed mini Gemma-3, "
        f"max_cache_len 256; median of {rounds}; {load()})"
    )
    for name, row in rows.items():
        print(
            f"   {name:30s} time to first token {statistics.median(row['ttft']) * 1e3:8.2f} ms, "
            f"{statistics.median(row['tps']):8.1f} tokens/s"
        )
    print(
        f"   {'C++ runner, whole process':30s} {statistics.median(process['wall']) * 1e3:8.2f} ms "
        f"wall from exec to exit (start, sha256 of the bundle, load, {len(first['tokens'])} "
        f"tokens): {statistics.median(process['tps']):8.1f} tokens/s over that wall"
    )
    print(
        f"   ({len(first['tokens'])} tokens, stop {first['stop']}, the same in all three; "
        f"C++ and Python rows timed by their generate loops, first prompt call to last token: "
        f"each C++ run is a fresh process, so its prefill is the program's first execution, "
        f"while the Python runner stays loaded and warm; eager: time to first token = "
        f"generate(max_new_tokens=1); runner {runner})"
    )


# ---- 3. cold and warm builds ------------------------------------------------------------------
def bench_builds(work: Path) -> None:
    import shutil

    seed = work / "seed"
    seed.mkdir(exist_ok=True)
    (seed / "model.py").write_text(SEED_MODEL)
    (seed / "manifest.yaml").write_text(SEED_MANIFEST)
    recipe = work / "recipe"
    recipe.mkdir(exist_ok=True)
    shutil.copy(EXAMPLE / "manifest.yaml", recipe / "manifest.yaml")
    for project in (seed, recipe):
        link = project / "mini-gemma3"
        if not link.exists():
            link.symlink_to(work / "mini-gemma3", target_is_directory=True)
    print(f"\n3. cold builds, each in a fresh process with an empty stage cache ({load()})")
    results = {}
    for name, project in (
        ("before (entrypoint, use_cache=False)", seed),
        ("after (recipe)", recipe),
    ):
        cache = project / "cold-cache"
        shutil.rmtree(cache, ignore_errors=True)
        shutil.rmtree(project / "out", ignore_errors=True)
        results[name] = result = run_build(project / "manifest.yaml", project / "out", cache)
        stages = ", ".join(f"{k} {v:.1f}s" for k, v in result["stages"].items())
        print(
            f"   {name:38s} {result['wall']:6.1f} s wall, {result['cpu']:6.1f} s CPU; "
            f"{result['delegates']} XNNPACK delegates; {stages}"
        )
    warm = run_build(recipe / "manifest.yaml", recipe / "out", recipe / "cold-cache")
    cold = results["after (recipe)"]
    cached = ", ".join(k for k, v in warm["cached"].items() if v)
    print(
        f"   after, warm (same cache)               {warm['wall']:6.2f} s wall "
        f"(stages {sum(warm['stages'].values()):.2f} s; cached: {cached})"
    )
    print(
        f"   warm / cold: {warm['wall'] / cold['wall']:.4f} by process wall, "
        f"{sum(warm['stages'].values()) / sum(cold['stages'].values()):.4f} by build() stages "
        f"(goal <= 0.05); cold after: {cold['wall']:.1f} s (goal <= 90 s); {load()}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=REPO / "benchmarks" / "results" / "llm")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=40, help="decode calls per round")
    parser.add_argument("--skip-builds", action="store_true", help="skip the cold/warm builds")
    default_runner = os.environ.get("TRT_EDGE_RUN") or str(
        REPO / "device_runner" / "cpp" / "build" / "runner" / "trt-edge-run"
    )
    parser.add_argument(
        "--runner", type=Path, default=Path(default_runner), help="the trt-edge-run binary"
    )
    args = parser.parse_args()
    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    if not os.access(args.runner, os.X_OK):
        parser.error(f"--runner {args.runner}: no trt-edge-run there; build it (make test-cpp)")
    from trt_edge.library_noise import quiet_library_noise

    with quiet_library_noise():
        write_seed_folder(work)
        print(textwrap.dedent(f"   work dir {work}; {load()}"))
        bench_decode(work, args.rounds, args.steps)
        bench_generate(work, recipe_bundle(work, 256), args.rounds, args.runner)
        if not args.skip_builds:
            bench_builds(work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
