"""Real-size LLM side by side with ExecuTorch's own LLM path (issue 19, "Must show").

    .venv/bin/python benchmarks/bench_llm_realsize.py [--layers 4] [--rounds 3] [--new-tokens 32]
        [--max-cache-len 2048] [--fill 1900] [--columns trt-fp32,trt-8da4w,et-fp32,et-8da4w,eager]
        [--quick] [--work DIR] [--runner PATH] [--json PATH] [--attention all|filled|fused]

`--columns` also takes `trt-8da4w-gN`: trt-edge's 8da4w at group size N (and its 8-bit
embedding at N), so group sizes are compared side by side in one run.

One Qwen3-0.6B-shaped folder (hidden 1,024, intermediate 3,072, 16 heads, 8 KV heads,
head_dim 128, vocab 151,936, tied embeddings; `--layers` deep, 28 for the real shape;
random weights written by transformers with a fixed seed plus the examples' trained
byte-level BPE tokenizer; nothing downloaded) goes through:

- trt-edge fp32 and trt-edge `8da4w` bundles (`build.quantize: {linear: 8da4w, group_size:
  128, embedding: 8w}`: 4-bit linear weights in groups of 128, 8-bit embedding rows in
  groups of 128), built by `trt_edge.pipeline.run.build` with an empty stage cache, run by
  the C++ runner `trt-edge-run --generate --json` (`make demo-runner`);
- ExecuTorch's own LLM export of the same weights, as a peer: the wheel's Qwen3 converter
  (`executorch.examples.models.qwen3.convert_weights`) writes its checkpoint layout, a params
  file is written from the folder's config.json, and `python -m
  executorch.extension.llm.export.export_llm --config` takes an LlmConfig with `model_class`
  `qwen3_0_6b`, `use_kv_cache`, `use_sdpa_with_kv_cache`, XNNPACK with extended ops and, for
  its 8da4w column, `qmode 8da4w`, `group_size 128`, `embedding_quantize 8,0` (8-bit, one
  scale per row); `max_seq_length` = `max_context_length` = `--max-cache-len` (its text runner
  refuses a prompt longer than `max_seq_length`, and the fill row needs one of `--fill`
  tokens). It runs through the wheel's own runner (`_llm_runner.TextLLMRunner`, after
  importing `executorch.extension.llm.custom_ops.custom_ops` and `executorch.kernels.quantized`);
- eager transformers (`generate(do_sample=False)`, its dynamic cache: no `max_cache_len`).

Every run is a fresh process; figures are medians over `--rounds`, the columns interleaved
round by round. Prompts are the same token ids everywhere (the ExecuTorch runner takes their
text, which its tokenizer turns back into the same count: checked, and printed). Columns:
cold build (wall, peak RSS of the build process), artifact size, time to first token for a
128-token prompt, decode tokens/s and ms/token after it (fill 128), ms/token after a `--fill`
token prompt, the runner process's peak RSS. "other load" is the CPU time other processes
used during a measurement (from /proc/stat minus our child's own), in cores: on a shared
2-core machine a figure measured beside > 0.3 cores of other work is marked contended.

Figures, never asserted. `--quick` (what `make bench` runs): 2 layers, 1 round, 8 new
tokens, fill 512 with `max_cache_len` 640.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
PROMPT = 128
GROUP_SIZE = 128
COLUMNS = ("trt-fp32", "trt-8da4w", "et-fp32", "et-8da4w", "eager")
CONTENDED_CORES = 0.3
SEED = 0

MANIFEST = """\
apiVersion: trt-edge/v1
kind: Model
metadata: {{name: {name}, version: 0.1.0}}
model:
  huggingface: {{path: ./folder, max_cache_len: {max_cache_len}, attention: {attention}}}
profiles:
  - {{name: decode, dims: {{seq: 1}}}}
  - {{name: prefill, dims: {{seq: {{min: 2, opt: {prompt}, max: {prefill_max}}}}}}}
runtime: {{policy: pinned, phases: {{prefill: prefill, decode: decode}}}}
build:
  backend: xnnpack
  targets: [cpu-x86_64]
{quantize}"""

# Random weights have near-flat next-token distributions, so 4-bit weights flip many
# argmaxes (docs/quantization.md): the budget is opened and the figures are reported.
QUANTIZE = """\
  quantize: {{linear: 8da4w, group_size: {group}, embedding: 8w}}
validate:
  budgets:
    8da4w: {{max_abs: 1000.0, min_agreement: 0.0, max_kl: 100.0}}
"""

# One trt-edge build in a fresh process: what `trt-edge build` pays, imports included.
TRT_BUILD = """\
import json, sys, time
started = time.perf_counter()
from pathlib import Path
from trt_edge.library_noise import quiet_library_noise
from trt_edge.pipeline.run import BuildOptions, build
options = BuildOptions(out_dir=Path(sys.argv[2]), cache_dir=Path(sys.argv[3]))
with quiet_library_noise():
    result = build(Path(sys.argv[1]), options)
print(json.dumps({"stages": result.stage_seconds, "wall": time.perf_counter() - started,
                  "bundle": str(result.bundle_dir)}))
"""

# ExecuTorch's own text runner from the wheel, in a fresh process.
ET_RUN = """\
import json, sys
def rss(field):
    for line in open("/proc/self/status"):
        if line.startswith(field):
            return int(line.split()[1]) * 1024
import executorch.extension.llm.custom_ops.custom_ops  # llama::custom_sdpa, update_cache
import executorch.kernels.quantized  # quantized_decomposed::embedding_byte etc.
from executorch.extension.llm.runner import GenerationConfig, TextLLMRunner
before = rss("VmRSS:")
pte, tokenizer, prompt, new = sys.argv[1], sys.argv[2], open(sys.argv[3]).read(), int(sys.argv[4])
runner = TextLLMRunner(pte, tokenizer)
stats = {}
def keep(s):
    stats.update(json.loads(s.to_json_string()))
config = GenerationConfig(echo=False, max_new_tokens=new, temperature=0.0, num_bos=1)
# No token_callback: byte-level pieces are not always valid UTF-8, and the binding's str
# conversion raises on them (UnicodeDecodeError).
runner.generate(prompt, config, stats_callback=keep)
print(json.dumps({"stats": stats, "rss_after_imports": before,
                  "peak_rss": rss("VmHWM:")}))
"""

# Eager transformers in a fresh process: warm-up, time to first token, then decode.
EAGER_RUN = """\
import json, sys, time
import torch, transformers
from transformers.utils import logging
logging.set_verbosity_error()
torch.manual_seed(0)
folder, ids, new = sys.argv[1], json.load(open(sys.argv[2])), int(sys.argv[3])
model = transformers.AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32).eval()
def generate(prompt, n):
    x = torch.tensor([prompt])
    config = transformers.GenerationConfig(do_sample=False, max_new_tokens=n, min_new_tokens=n,
                                           eos_token_id=None, pad_token_id=0)
    started = time.perf_counter()
    with torch.no_grad():
        out = model.generate(x, attention_mask=torch.ones_like(x), generation_config=config)
    return time.perf_counter() - started, out[0, len(prompt):].tolist()
generate(ids[:4], 2)
first, _ = generate(ids, 1)
total, tokens = generate(ids, new)
def rss(field):
    for line in open("/proc/self/status"):
        if line.startswith(field):
            return int(line.split()[1]) * 1024
print(json.dumps({"ttft_ms": first * 1e3, "decode_ms": (total - first) * 1e3 / (new - 1),
                  "tokens": tokens, "peak_rss": rss("VmHWM:")}))
"""


def qwen3_config(layers: int, writer: Any) -> Any:
    """Qwen3-0.6B's published shape, `layers` deep; special ids from the examples' tokenizer."""
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
        rms_norm_eps=1e-6,
        tie_word_embeddings=True,
        rope_theta=1_000_000.0,
        pad_token_id=writer.PAD_ID,
        eos_token_id=writer.EOS_ID,
        bos_token_id=writer.BOS_ID,
    )


# ---- measuring one process ------------------------------------------------------------------
def cpu_busy_seconds() -> float:
    """Seconds of CPU all processes used since boot (/proc/stat: all but idle and iowait)."""
    with open("/proc/stat") as stat:
        fields = [int(v) for v in stat.readline().split()[1:]]
    return (sum(fields) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")


@dataclass
class Measured:
    """One child process: its stdout, wall time, own CPU, peak RSS, and others' CPU beside it."""

    stdout: str
    wall_s: float
    cpu_s: float
    peak_rss: int  # bytes, the child's ru_maxrss
    other_cores: float  # mean cores of CPU other processes used while it ran


def measure_child(argv: Sequence[str], *, what: str) -> Measured:
    """Run `argv` to completion in a fresh process, reaped by os.wait4 for its own rusage;
    exit with its stderr tail if it fails."""
    env = {**os.environ, "PYTHONPATH": f"{REPO / 'sdk'}:{REPO / 'device_runner'}"}
    env.setdefault("TOKENIZERS_PARALLELISM", "false")
    out_path = Path(os.environ.get("TMPDIR", "/tmp")) / f"realsize-{os.getpid()}.out"
    err_path = out_path.with_suffix(".err")
    busy = cpu_busy_seconds()
    started = time.perf_counter()
    with out_path.open("w") as out, err_path.open("w") as err:
        actions = [(os.POSIX_SPAWN_DUP2, out.fileno(), 1), (os.POSIX_SPAWN_DUP2, err.fileno(), 2)]
        pid = os.posix_spawnp(argv[0], list(argv), env, file_actions=actions)
        _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - started
    stdout, stderr = out_path.read_text(), err_path.read_text()
    out_path.unlink()
    err_path.unlink()
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        sys.stderr.write(stderr[-4000:])
        raise SystemExit(f"{what} failed (exit {code}): {' '.join(argv)[:300]}")
    cpu = usage.ru_utime + usage.ru_stime
    others = max(0.0, cpu_busy_seconds() - busy - cpu) / wall if wall > 0 else 0.0
    return Measured(stdout, wall, cpu, usage.ru_maxrss * 1024, others)


def python(code_or_module: str, *args: object, module: bool = False) -> list[str]:
    head = ["-m", code_or_module] if module else ["-c", code_or_module]
    return [sys.executable, *head, *map(str, args)]


def last_json(text: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(text.strip().splitlines()[-1])
    return doc


# ---- the model folder, prompts, the peer's inputs ---------------------------------------------
def example_writer() -> Any:
    import importlib.util

    path = REPO / "examples" / "gemma3" / "write_model.py"
    spec = importlib.util.spec_from_file_location("gemma3_write_model", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write_folder(work: Path, layers: int) -> Path:
    """The HF folder (random weights, seed 0) and the trained tokenizer; reused if present."""
    folder = work / "folder"
    marker = folder / "config.json"
    if marker.is_file() and json.loads(marker.read_text())["num_hidden_layers"] == layers:
        return folder
    writer = example_writer()
    writer.write_folder(folder, qwen3_config(layers, writer), writer.CHATML_CHAT_TEMPLATE)
    return folder


def prompt_ids(folder: Path, length: int) -> tuple[list[int], str]:
    """`length` token ids and their text: <bos>, then words each of which the tokenizer keeps
    as one token (" word"), drawn with a fixed seed. Re-encoding the text gives the ids back
    (checked), so every runner sees the same prompt."""
    import random

    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    vocab = tokenizer.get_vocab()
    words = sorted(
        piece for piece in vocab if piece.startswith("\u0120") and piece[1:].isalpha()
    )  # byte-level BPE spells a leading space as U+0120
    words = [
        w for w in words if len(tokenizer.encode(" " + w[1:], add_special_tokens=False).ids) == 1
    ]
    rng = random.Random(SEED)
    text = "".join(" " + rng.choice(words)[1:] for _ in range(length - 1))
    ids = tokenizer.encode(text).ids  # the post-processor puts <bos> first
    if len(ids) != length:
        raise SystemExit(f"prompt of {length} tokens came out as {len(ids)}")
    return ids, text


def et_inputs(work: Path, folder: Path) -> tuple[Path, Path]:
    """ExecuTorch's checkpoint (its own Qwen3 converter) and a params file from config.json."""
    checkpoint, params = work / "et" / "checkpoint.pth", work / "et" / "params.json"
    checkpoint.parent.mkdir(parents=True, exist_ok=True)
    config = json.loads((folder / "config.json").read_text())
    doc = {
        "dim": config["hidden_size"],
        "hidden_dim": config["intermediate_size"],
        "n_heads": config["num_attention_heads"],
        "n_kv_heads": config["num_key_value_heads"],
        "head_dim": config["head_dim"],
        "n_layers": config["num_hidden_layers"],
        "norm_eps": config["rms_norm_eps"],
        "rope_theta": config.get("rope_theta") or config["rope_parameters"]["rope_theta"],
        "vocab_size": config["vocab_size"],
        "use_scaled_rope": False,
        "use_hf_rope": True,
        "use_qk_norm": True,
        "qk_norm_before_rope": True,
        "attention_qkv_bias": False,
        "ffn_dim_multiplier": 1,
    }
    params.write_text(json.dumps(doc, indent=1))
    if (
        not checkpoint.is_file()
        or checkpoint.stat().st_mtime < (folder / "config.json").stat().st_mtime
    ):
        measure_child(
            python(
                "executorch.examples.models.qwen3.convert_weights", folder, checkpoint, module=True
            ),
            what="ExecuTorch's qwen3 convert_weights",
        )
    return checkpoint, params


def et_config(
    work: Path, scheme: str, checkpoint: Path, params: Path, max_len: int, layers: int
) -> tuple[Path, Path]:
    """The LlmConfig yaml for `export_llm --config` and the .pte it will write."""
    out = work / "et" / scheme
    out.mkdir(parents=True, exist_ok=True)
    name = f"qwen3-L{layers}-{scheme}.pte"
    quant = (
        f"quantization:\n  qmode: 8da4w\n  group_size: {GROUP_SIZE}\n  embedding_quantize: '8,0'\n"
        if scheme == "8da4w"
        else ""
    )
    text = f"""\
base:
  model_class: qwen3_0_6b
  params: {params}
  checkpoint: {checkpoint}
  metadata: '{{"get_bos_id": 2, "get_eos_ids": [1]}}'
model:
  use_kv_cache: true
  use_sdpa_with_kv_cache: true
  dtype_override: fp32
export:
  max_seq_length: {max_len}
  max_context_length: {max_len}
  output_dir: {out}
  output_name: {name}
backend:
  xnnpack:
    enabled: true
    extended_ops: true
{quant}"""
    config = out / "llm_config.yaml"
    config.write_text(text)
    return config, out / name


# ---- builds -------------------------------------------------------------------------------------
@dataclass
class Column:
    """One column of the table: how it was built and what each run measured."""

    name: str
    label: str
    build: dict[str, Any] = field(default_factory=dict)
    artifact: Path | None = None
    runs: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # by prompt length


def group_of(name: str) -> int:
    """The group size of a column: `trt-8da4w-g32` is 32; the default one otherwise."""
    found = re.fullmatch(r"trt-8da4w-g(\d+)", name)
    return int(found.group(1)) if found else GROUP_SIZE


def build_trt(work: Path, column: Column, scheme: str, layers: int, args: Any) -> None:
    project = work / column.name
    project.mkdir(parents=True, exist_ok=True)
    link = project / "folder"
    if not link.exists():
        link.symlink_to(work / "folder", target_is_directory=True)
    manifest = project / "manifest.yaml"
    manifest.write_text(
        MANIFEST.format(
            name=f"qwen3-l{layers}-{column.name.removeprefix('trt-')}",
            max_cache_len=args.max_cache_len,
            attention=args.attention,
            prompt=PROMPT,
            prefill_max=args.prefill_max,
            quantize=QUANTIZE.format(group=group_of(column.name)) if scheme == "8da4w" else "",
        )
    )
    cache, out = project / "cold-cache", project / "out"
    shutil.rmtree(cache, ignore_errors=True)
    shutil.rmtree(out, ignore_errors=True)
    run = measure_child(python(TRT_BUILD, manifest, out, cache), what=f"trt-edge build {scheme}")
    doc = last_json(run.stdout)
    bundle = Path(doc["bundle"])
    report = json.loads((bundle / "reports" / "validation.json").read_text())
    column.build = {
        "wall_s": run.wall_s,
        "peak_rss": run.peak_rss,
        "other_cores": run.other_cores,
        "stages_s": doc["stages"],
        "quality": report.get("quality"),
        "bundle": str(bundle),
    }
    column.artifact = bundle / "model.pte"
    shutil.rmtree(cache, ignore_errors=True)  # the stage cache holds a second copy


def build_et(work: Path, column: Column, scheme: str, layers: int, args: Any) -> None:
    folder = work / "folder"
    checkpoint, params = et_inputs(work, folder)
    config, pte = et_config(work, scheme, checkpoint, params, args.max_cache_len, layers)
    pte.unlink(missing_ok=True)
    argv = ["env", "-C", str(config.parent)]
    argv += python("executorch.extension.llm.export.export_llm", "--config", config, module=True)
    run = measure_child(argv, what=f"ExecuTorch export_llm {scheme}")
    if not pte.is_file():
        raise SystemExit(f"export_llm wrote no {pte}; its log ends:\n{run.stdout[-2000:]}")
    column.build = {"wall_s": run.wall_s, "peak_rss": run.peak_rss, "other_cores": run.other_cores}
    column.artifact = pte


# ---- runs ----------------------------------------------------------------------------------------
def run_trt(column: Column, runner: Path, ids: list[int], new: int) -> dict[str, Any]:
    bundle = Path(column.build["bundle"])
    argv = [str(runner), "generate", "--bundle", str(bundle), "--json"]
    argv += ["--prompt-ids", ",".join(map(str, ids)), "--max-new-tokens", str(new)]
    run = measure_child(argv, what=f"trt-edge-run --generate ({column.name})")
    doc = json.loads(run.stdout)
    timings = doc["timings"]
    decode = [s["ms"] for s in doc["steps"] if s["phase"] == "decode"]
    return {
        "ttft_ms": timings["time_to_first_token_ms"],
        "decode_ms": statistics.median(decode) if decode else float("nan"),
        "tokens": doc["tokens"],
        "peak_rss": run.peak_rss,
        "process_s": run.wall_s,
        "other_cores": run.other_cores,
    }


def run_et(column: Column, work: Path, folder: Path, text: str, new: int) -> dict[str, Any]:
    assert column.artifact is not None
    prompt = work / "et" / f"prompt-{len(text)}.txt"
    prompt.write_text(text)
    run = measure_child(
        python(ET_RUN, column.artifact, folder / "tokenizer.json", prompt, new),
        what=f"ExecuTorch TextLLMRunner ({column.name})",
    )
    doc = last_json(run.stdout)
    s = doc["stats"]
    generated = s["generated_tokens"] if "generated_tokens" in s else s["num_generated_tokens"]
    first = s["first_token_ms"] - s["inference_start_ms"]
    decode = (s["inference_end_ms"] - s["first_token_ms"]) / max(1, generated - 1)
    return {
        "ttft_ms": float(first),
        "decode_ms": float(decode),
        "prompt_tokens": s.get("prompt_tokens", s.get("num_prompt_tokens")),
        "generated": generated,
        "peak_rss": run.peak_rss,
        "rss_after_imports": doc["rss_after_imports"],
        "process_s": run.wall_s,
        "other_cores": run.other_cores,
    }


def run_eager(work: Path, folder: Path, ids: list[int], new: int) -> dict[str, Any]:
    path = work / f"ids-{len(ids)}.json"
    path.write_text(json.dumps(ids))
    run = measure_child(python(EAGER_RUN, folder, path, new), what="eager transformers")
    doc = last_json(run.stdout)
    doc.update(process_s=run.wall_s, other_cores=run.other_cores)
    return doc


# ---- the table -----------------------------------------------------------------------------------
def med(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


def program_bytes(artifact: Path) -> int:
    """The program's size on disk: a trt-edge bundle's `model.pte` with its external data
    (`model.ptd`, where a tied embedding's single copy and the other constants live)."""
    size = artifact.stat().st_size
    data = artifact.with_suffix(".ptd")
    if artifact.name == "model.pte" and data.is_file():
        size += data.stat().st_size
    return size


def summarize(column: Column, fills: Sequence[int]) -> dict[str, Any]:
    short, long = column.runs.get(str(PROMPT), []), column.runs.get(str(fills[-1]), [])
    row: dict[str, Any] = {
        "build_s": column.build.get("wall_s"),
        "build_peak_rss": column.build.get("peak_rss"),
        "artifact_bytes": program_bytes(column.artifact) if column.artifact else None,
        "ttft_ms": med([r["ttft_ms"] for r in short]),
        "decode_ms_fill_short": med([r["decode_ms"] for r in short]),
        "decode_ms_fill_long": med([r["decode_ms"] for r in long]),
        "runner_peak_rss": med([r["peak_rss"] for r in short]),
        "other_cores_max": max(
            [r["other_cores"] for r in short + long] + [column.build.get("other_cores", 0.0)]
        ),
        "build_other_cores": column.build.get("other_cores"),
    }
    row["decode_tok_s"] = 1e3 / row["decode_ms_fill_short"]
    return row


def fmt(value: float | None, spec: str, scale: float = 1.0) -> str:
    if value is None or value != value:
        return "—"
    return format(value / scale, spec)


def print_table(
    summary: dict[str, dict[str, Any]], labels: dict[str, str], meta: dict[str, Any]
) -> None:
    from rich.console import Console
    from rich.table import Table

    fill = meta["fill"]
    table = Table(title=meta["title"], show_lines=False)
    for head in (
        "column",
        "cold build",
        "build peak RSS",
        "artifact",
        f"TTFT ({PROMPT} tok)",
        "decode tok/s",
        f"ms/tok fill {PROMPT}",
        f"ms/tok fill {fill}",
        "runner peak RSS",
        "other load",
    ):
        table.add_column(head, justify="right" if head != "column" else "left")
    for name, row in summary.items():
        contended = row["other_cores_max"] > CONTENDED_CORES
        table.add_row(
            labels[name],
            fmt(row["build_s"], ".0f") + " s" if row["build_s"] else "—",
            fmt(row["build_peak_rss"], ".2f", 2**30) + " GiB" if row["build_peak_rss"] else "—",
            fmt(row["artifact_bytes"], ".0f", 1e6) + " MB" if row["artifact_bytes"] else "—",
            fmt(row["ttft_ms"], ".0f") + " ms",
            fmt(row["decode_tok_s"], ".2f"),
            fmt(row["decode_ms_fill_short"], ".1f"),
            fmt(row["decode_ms_fill_long"], ".1f"),
            fmt(row["runner_peak_rss"], ".0f", 2**20) + " MiB",
            fmt(row["other_cores_max"], ".2f") + (" *" if contended else ""),
        )
    console = Console(width=200)
    console.print(table)
    for line in meta["notes"]:
        console.print(line, highlight=False)


def goals(summary: dict[str, dict[str, Any]], weights: int) -> dict[str, float | None]:
    def ratio(a: str, b: str, key: str) -> float | None:
        if a in summary and b in summary and summary[b][key]:
            return float(summary[a][key] / summary[b][key])
        return None

    out: dict[str, float | None] = {}
    for scheme in ("fp32", "8da4w"):
        trt, et = f"trt-{scheme}", f"et-{scheme}"
        out[f"decode_tok_s_{scheme}_trt_over_et"] = ratio(trt, et, "decode_tok_s")
        if trt in summary and et in summary:
            out[f"decode_long_{scheme}_speedup"] = (
                summary[et]["decode_ms_fill_long"] / summary[trt]["decode_ms_fill_long"]
            )
        out[f"ttft_{scheme}_trt_over_et"] = ratio(trt, et, "ttft_ms")
        out[f"runner_rss_{scheme}_trt_over_et"] = ratio(trt, et, "runner_peak_rss")
    if "trt-8da4w" in summary:
        out["artifact_8da4w_over_fp32_weights"] = summary["trt-8da4w"]["artifact_bytes"] / weights
    return out


GOAL_TEXT = {
    "decode_tok_s_fp32_trt_over_et": "decode tok/s trt-edge ÷ ExecuTorch, fp32, fill 128 (≥ 1)",
    "decode_tok_s_8da4w_trt_over_et": "decode tok/s trt-edge ÷ ExecuTorch, 8da4w, fill 128 (≥ 1)",
    "decode_long_fp32_speedup": "long-fill speed trt ÷ ET, fp32 (≥ 1)",
    "decode_long_8da4w_speedup": "long-fill speed trt ÷ ET, 8da4w (≥ 1)",
    "ttft_fp32_trt_over_et": "trt-edge ÷ ExecuTorch time to first token, fp32 (goal < 1)",
    "ttft_8da4w_trt_over_et": "trt-edge ÷ ExecuTorch time to first token, 8da4w (goal < 1)",
    "artifact_8da4w_over_fp32_weights": "trt-edge 8da4w model.pte ÷ fp32 safetensors (goal ≤ 0.3)",
    "runner_rss_fp32_trt_over_et": "trt-edge ÷ ExecuTorch runner peak RSS, fp32",
    "runner_rss_8da4w_trt_over_et": "trt-edge ÷ ExecuTorch runner peak RSS, 8da4w (goal ≤ 1)",
}


@contextmanager
def step(text: str) -> Iterator[None]:
    started = time.perf_counter()
    print(f"-- {text} ...", flush=True)
    yield
    print(f"   done in {time.perf_counter() - started:.0f} s", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--layers", type=int, default=4, help="decoder layers (28: the real shape)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--new-tokens", type=int, default=32)
    parser.add_argument("--max-cache-len", type=int, default=2048)
    parser.add_argument("--fill", type=int, default=1900, help="the long prompt's length")
    parser.add_argument("--prefill-max", type=int, default=512, help="trt-edge's prefill chunk")
    parser.add_argument("--attention", choices=("all", "filled", "fused"), default="fused")
    parser.add_argument("--columns", default=",".join(COLUMNS))
    parser.add_argument("--quick", action="store_true", help="2 layers, 1 round, short runs")
    parser.add_argument("--work", type=Path, default=Path("/tmp/trt-edge-bench-realsize"))
    parser.add_argument("--json", type=Path, default=None, help="default: WORK/results.json")
    parser.add_argument("--skip-builds", action="store_true", help="reuse the recorded builds")
    parser.add_argument(
        "--build-only",
        action="store_true",
        help="build the columns and record them (two such processes may share --work), then stop",
    )
    default_runner = os.environ.get("TRT_EDGE_RUN") or str(
        REPO / "device_runner" / "cpp" / "build" / "runner" / "trt-edge-run"
    )
    parser.add_argument("--runner", type=Path, default=Path(default_runner))
    args = parser.parse_args()
    if args.quick:
        args.layers, args.rounds, args.new_tokens = 2, 1, 8
        args.max_cache_len, args.fill = 640, 512
    columns = [c for c in args.columns.split(",") if c]
    # trt-8da4w-gN: trt-edge's 8da4w at group size N, beside the others (issue 29, part 5).
    unknown = sorted(
        c for c in set(columns) - set(COLUMNS) if not re.fullmatch(r"trt-8da4w-g\d+", c)
    )
    if unknown:
        parser.error(f"--columns: unknown {unknown}; choose from {','.join(COLUMNS)}")
    if any(c.startswith("trt-") for c in columns) and not os.access(args.runner, os.X_OK):
        parser.error(f"--runner {args.runner}: no trt-edge-run there; build it (make demo-runner)")
    if args.fill + args.new_tokens > args.max_cache_len:
        parser.error("--fill + --new-tokens must fit in --max-cache-len")
    work = args.work.resolve() / f"L{args.layers}-c{args.max_cache_len}"
    work.mkdir(parents=True, exist_ok=True)
    labels = {
        "trt-fp32": "trt-edge fp32, C++ runner",
        "trt-8da4w": f"trt-edge 8da4w g{GROUP_SIZE} + emb 8w g{GROUP_SIZE}, C++ runner",
        "et-fp32": "ExecuTorch export_llm fp32, its runner",
        "et-8da4w": f"ExecuTorch export_llm 8da4w g{GROUP_SIZE} + emb 8,0, its runner",
        "eager": "eager transformers (dynamic cache)",
    }
    for name in columns:
        if name not in labels:  # trt-8da4w-gN
            group = group_of(name)
            labels[name] = f"trt-edge 8da4w g{group} + emb 8w g{group}, C++ runner"
    table = {name: Column(name, labels[name]) for name in columns}
    state = work / "builds.json"

    with step(f"Qwen3-0.6B-shaped folder, {args.layers} layers"):
        folder = write_folder(work, args.layers)
    weights = (folder / "model.safetensors").stat().st_size
    fills = (PROMPT, args.fill)
    prompts = {n: prompt_ids(folder, n) for n in fills}

    saved = json.loads(state.read_text()) if state.is_file() else {}
    if args.skip_builds:
        saved.setdefault("eager", {"build": {}, "artifact": str(folder / "model.safetensors")})
        missing = sorted(set(table) - set(saved))
        if missing:
            parser.error(f"--skip-builds: no builds of {missing} in {state}; build them first")
        for name, column in table.items():
            column.build = saved[name]["build"]
            column.artifact = Path(saved[name]["artifact"]) if saved[name]["artifact"] else None
    else:
        for name, column in table.items():
            if name == "eager":
                column.artifact = folder / "model.safetensors"
            else:
                kind, scheme = name.split("-")[:2]
                with step(f"cold build {column.label}"):
                    build = build_trt if kind == "trt" else build_et
                    build(work, column, scheme, args.layers, args)
                print(f"   {json.dumps({k: v for k, v in column.build.items() if k != 'bundle'})}")
            # Re-read and merge: two --build-only processes may share the work dir.
            saved = json.loads(state.read_text()) if state.is_file() else {}
            saved[name] = {"build": column.build, "artifact": str(column.artifact or "")}
            staging = state.with_suffix(f".{os.getpid()}.tmp")
            staging.write_text(json.dumps(saved))
            staging.replace(state)
    if args.build_only:
        print(f"builds recorded in {state}; measure with --skip-builds")
        return 0

    def run(column: Column, n: int) -> dict[str, Any]:
        ids, text = prompts[n]
        if column.name.startswith("trt-"):
            return run_trt(column, args.runner, ids, args.new_tokens)
        if column.name.startswith("et-"):
            return run_et(column, work, folder, text, args.new_tokens)
        return run_eager(work, folder, ids, args.new_tokens)

    for round_index in range(args.rounds):
        with step(f"round {round_index + 1}/{args.rounds}"):
            for n in fills:
                for column in table.values():
                    column.runs.setdefault(str(n), []).append(run(column, n))
        # The raw runs so far: a failure while summarizing loses no measurement.
        (work / "runs.json").write_text(json.dumps({c.name: c.runs for c in table.values()}))

    summary = {name: summarize(column, fills) for name, column in table.items()}
    ratios = goals(summary, weights)
    checks = consistency(table, fills, folder)
    title = (
        f"Qwen3-0.6B shape cut to {args.layers} layers (vocab 151,936, hidden 1,024), random "
        f"weights; prompt {PROMPT} and {args.fill} tokens, {args.new_tokens} new, max_cache_len "
        f"{args.max_cache_len}; medians of {args.rounds} fresh processes"
    )
    notes = [
        f"fp32 weights (model.safetensors, tied embedding once): {weights / 1e6:.0f} MB. "
        f"trt-edge attention: {args.attention}; prefill chunk {args.prefill_max}.",
        "other load: max over the column's build and runs of the CPU other processes used "
        f"meanwhile, in cores (of {os.cpu_count()}); * = above {CONTENDED_CORES}: contended.",
        "runner peak RSS: the whole process (ExecuTorch's runner is a Python process: its "
        "imports alone hold the RSS printed below).",
        *checks,
    ]
    for key, value in ratios.items():
        if value is not None:
            notes.append(f"{GOAL_TEXT.get(key, key)}: {value:.2f}")
    print_table(summary, labels, {"title": title, "fill": args.fill, "notes": notes})
    document = {
        "title": title,
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "args": {k: str(v) for k, v in vars(args).items()},
        "layers": args.layers,
        "weights_bytes": weights,
        "columns": {
            name: {
                "label": labels[name],
                "summary": summary[name],
                "build": table[name].build,
                "runs": table[name].runs,
            }
            for name in table
        },
        "goals": ratios,
        "checks": checks,
    }
    out = args.json or (work / "results.json")
    staging = out.with_suffix(".json.tmp")
    staging.write_text(json.dumps(document, indent=1, default=str))
    staging.replace(out)
    print(f"written {out}")
    return 0


def consistency(table: dict[str, Column], fills: Sequence[int], folder: Path) -> list[str]:
    """What the runs agree on: prompt lengths the ExecuTorch runner saw, tokens vs eager."""
    lines = []
    for name, column in table.items():
        if name.startswith("et-"):
            seen = {r.get("prompt_tokens") for n in fills for r in column.runs[str(n)]}
            lines.append(
                f"{name}: prompt token counts its runner reported {sorted(map(str, seen))}"
            )
            base = column.runs[str(PROMPT)][0]["rss_after_imports"]
            lines.append(
                f"{name}: the Python process's RSS after its imports {base / 2**20:.0f} MiB"
            )
    if "eager" in table:
        eager = table["eager"].runs[str(PROMPT)][0]["tokens"]
        for name, column in table.items():
            if name.startswith("trt-"):
                got = column.runs[str(PROMPT)][0]["tokens"]
                same = sum(a == b for a, b in zip(got, eager, strict=False))
                lines.append(f"{name}: {same}/{len(eager)} greedy tokens equal to eager's")
    return lines


if __name__ == "__main__":
    raise SystemExit(main())
