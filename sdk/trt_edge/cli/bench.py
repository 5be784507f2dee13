"""`trt-edge bench BUNDLE [--iterations N] [--json] [--plot FILE.png]`: per-phase latency.

For every phase of the bundle's runtime policy, inputs sized by the opt of the
profile the phase pins (profile 0's for an `auto` phase) are timed under three
requests, in one run, so their ratios are meaningful: (a) the bundle's policy,
(b) `auto`, (c) every call pinned to the widest profile (where the phase's
inputs fit it). Then an alternating loop — prefill once, decode k times —
the pattern an LLM server produces, switching profiles every round.

Reported per case: p50/p90/p99 in milliseconds, as a table, as JSON (`--json`)
and as a PNG chart (`--plot`), with the machine it ran on (CPU model, cores;
on a Jetson the nvpmodel power mode and clocks where readable). Honest limit:
on a CPU backend the runner emulates profiles — every profile runs the same
XNNPACK kernels — so (a), (b) and (c) differ only by runner overhead and noise;
on TensorRT each profile is its own engine tuning.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trt_edge_runner.cli_args import (
    add_bundle_argument,
    add_json_argument,
    add_verbose_argument,
    at_least,
    require_dir,
)
from trt_edge_runner.cli_shell import Command
from trt_edge_runner.commands.run import configure_logging
from trt_edge_runner.durable import atomic_file
from trt_edge_runner.errors import ResultWriteError, RunnerError, Where
from trt_edge_runner.policy import Request
from trt_edge_runner.runner import Runner
from trt_edge_runner.tensors import check_output_path, random_inputs

# Standard-library modules only some functions need are imported inside them:
# `trt-edge --help` imports every CLI module (startup budget).
if TYPE_CHECKING:
    from trt_edge_runner.bundle_format import BundleManifest
    from trt_edge_runner.runner import Runner, Target

WARMUP = 3


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_bundle_argument(parser)
    parser.add_argument("--iterations", type=at_least(1), default=50, help="timed calls per case")
    parser.add_argument(
        "--decode-steps", type=at_least(1), default=8, help="decode calls per prefill in the loop"
    )
    add_json_argument(parser, help="print the JSON result on stdout")
    parser.add_argument("--plot", metavar="FILE.png", help="write a chart of the result")
    add_verbose_argument(parser)


# ---- machine facts ----------------------------------------------------------------
def _read(path: str) -> str | None:
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None


def machine_facts() -> dict[str, Any]:
    """CPU model and cores; on a Jetson the power mode and clocks (when readable)."""
    model = None
    cpuinfo = _read("/proc/cpuinfo") or ""
    for line in cpuinfo.splitlines():
        if line.lower().startswith(("model name", "hardware", "cpu model")):
            model = line.split(":", 1)[1].strip()
            break
    facts: dict[str, Any] = {
        "cpu_model": model or platform.processor() or None,
        "cores": os.cpu_count(),
        "arch": platform.machine(),
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
    }
    freq = _read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq")
    facts["cpu0_khz"] = int(freq) if freq and freq.isdigit() else None
    tegra = _read("/etc/nv_tegra_release")
    facts["jetson_l4t"] = tegra.splitlines()[0] if tegra else None
    if tegra:
        try:
            proc = subprocess.run(
                ["nvpmodel", "-q"], capture_output=True, text=True, timeout=10, check=False
            )
            facts["jetson_power_mode"] = proc.stdout.strip() or None
        except (OSError, subprocess.TimeoutExpired):
            facts["jetson_power_mode"] = None
        gpu = _read("/sys/devices/gpu.0/devfreq/17000000.gpu/cur_freq") or _read(
            "/sys/devices/platform/gpu.0/devfreq/gpu.0/cur_freq"
        )
        facts["jetson_gpu_hz"] = int(gpu) if gpu and gpu.isdigit() else None
    return facts


# ---- measurement --------------------------------------------------------------------
def percentiles(samples_s: list[float]) -> dict[str, float]:
    import numpy as np

    ms = np.asarray(samples_s) * 1e3
    return {
        "p50_ms": round(float(np.percentile(ms, 50)), 4),
        "p90_ms": round(float(np.percentile(ms, 90)), 4),
        "p99_ms": round(float(np.percentile(ms, 99)), 4),
        "n": len(samples_s),
    }


def widest_profile(manifest: BundleManifest) -> int:
    """The profile spanning the most: largest sum of (max - min) over its symbols."""
    spans = [
        (sum(r.max - r.min for r in p.dims.values()), -i) for i, p in enumerate(manifest.profiles)
    ]
    return -max(spans)[1]


def phase_dims(runner: Runner, phase: str) -> dict[str, int]:
    target = runner.manifest.runtime.phases[phase]
    index = target if isinstance(target, int) else 0
    return runner.manifest.profiles[index].opt_symbols()


def time_case(runner: Runner, target: Target, inputs: list[Any], iterations: int) -> list[float]:
    for _ in range(WARMUP):
        runner.run(target, inputs)
    samples = []
    for _ in range(iterations):
        started = time.perf_counter()
        runner.run(target, inputs)
        samples.append(time.perf_counter() - started)
    return samples


def bench(runner: Runner, iterations: int, decode_steps: int) -> dict[str, Any]:
    manifest = runner.manifest
    widest = widest_profile(manifest)
    phases: dict[str, Any] = {}
    inputs_by_phase: dict[str, list[Any]] = {}
    cases: list[tuple[str, Target]] = []
    for phase in runner.phases:
        dims = phase_dims(runner, phase)
        inputs = random_inputs(manifest, dims, seed=1)
        inputs_by_phase[phase] = inputs
        cases = [("policy", phase), ("auto", Request.auto()), ("widest", widest)]
        entry: dict[str, Any] = {"dims": dims}
        for label, target in cases:
            try:
                samples = time_case(runner, target, inputs, iterations)
            except RunnerError as exc:
                entry[label] = {"error": str(exc).splitlines()[0]}
                continue
            entry[label] = {**percentiles(samples), "profile": runner.last_profile}
        phases[phase] = entry
    loop: dict[str, Any] | None = None
    if "prefill" in inputs_by_phase and "decode" in inputs_by_phase:
        rounds = max(3, iterations // max(decode_steps, 1))
        round_s: list[float] = []
        decode_s: list[float] = []
        switches = 0
        previous = None
        for r in range(rounds + 1):
            started = time.perf_counter()
            result = runner.run("prefill", inputs_by_phase["prefill"])
            switches += previous is not None and result.profile != previous
            previous = result.profile
            for _ in range(decode_steps):
                step = time.perf_counter()
                result = runner.run("decode", inputs_by_phase["decode"])
                switches += result.profile != previous
                previous = result.profile
                if r:
                    decode_s.append(time.perf_counter() - step)
            if r:  # round 0 warms up
                round_s.append(time.perf_counter() - started)
        loop = {
            "rounds": rounds,
            "decode_steps": decode_steps,
            "round": percentiles(round_s),
            "decode_in_loop": percentiles(decode_s),
            "profile_switches": int(switches),
        }
    return {
        "bundle": str(runner.bundle_dir),
        "model": f"{manifest.name} {manifest.version}",
        "backend": manifest.backend,
        "mode": runner.mode,
        "iterations": iterations,
        "widest_profile": widest,
        "phases": phases,
        "alternating": loop,
        "machine": machine_facts(),
        "note": (
            "emulated mode: every profile runs the same CPU kernels; differences between "
            "policy/auto/widest are runner overhead and noise"
            if runner.mode == "emulated"
            else "native mode: each profile is its own TensorRT tuning"
        ),
    }


# ---- output -----------------------------------------------------------------------
def table(result: dict[str, Any]) -> str:
    lines = [
        f"{result['model']} ({result['backend']}, {result['mode']} mode), "
        f"{result['iterations']} iterations; machine: {result['machine']['cpu_model']}, "
        f"{result['machine']['cores']} cores",
        f"{'phase':<10} {'case':<8} {'profile':>7} {'p50 ms':>10} {'p90 ms':>10} {'p99 ms':>10}",
    ]
    for phase, entry in result["phases"].items():
        for case in ("policy", "auto", "widest"):
            row = entry[case]
            if "error" in row:
                lines.append(f"{phase:<10} {case:<8} {'-':>7} n/a: {row['error'][:70]}")
                continue
            lines.append(
                f"{phase:<10} {case:<8} {row['profile']:>7} {row['p50_ms']:>10.3f} "
                f"{row['p90_ms']:>10.3f} {row['p99_ms']:>10.3f}"
            )
    loop = result["alternating"]
    if loop:
        for key, label in (("round", "round"), ("decode_in_loop", "decode")):
            row = loop[key]
            lines.append(
                f"{'loop':<10} {label:<8} {'':>7} {row['p50_ms']:>10.3f} {row['p90_ms']:>10.3f} "
                f"{row['p99_ms']:>10.3f}"
            )
        lines.append(
            f"alternating loop: prefill → decode×{loop['decode_steps']}, {loop['rounds']} rounds, "
            f"{loop['profile_switches']} profile switches"
        )
    lines.append(f"note: {result['note']}")
    return "\n".join(lines)


def plot(result: dict[str, Any], path: Path) -> None:
    """Grouped bars (p50, whiskers to p90, dots at p99) per phase and case, written atomically."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cases = ("policy", "auto", "widest")
    colours = {"policy": "#1f77b4", "auto": "#ff7f0e", "widest": "#2ca02c"}
    groups = list(result["phases"])
    if result["alternating"]:
        groups.append("decode in loop")
    fig, ax = plt.subplots(figsize=(max(6.0, 2.2 * len(groups)), 4.2), dpi=110)
    width = 0.26
    for c, case in enumerate(cases):
        xs, p50, err, p99 = [], [], [], []
        for g, group in enumerate(groups):
            if group == "decode in loop":
                row = result["alternating"]["decode_in_loop"] if case == "policy" else None
            else:
                row = result["phases"][group][case]
            if not row:
                continue
            if "error" in row:
                ax.text(g + (c - 1) * width, 0, "n/a", ha="center", va="bottom", fontsize=7)
                continue
            xs.append(g + (c - 1) * width)
            p50.append(row["p50_ms"])
            err.append(row["p90_ms"] - row["p50_ms"])
            p99.append(row["p99_ms"])
        ax.bar(
            xs,
            p50,
            width,
            yerr=[[0] * len(err), err],
            capsize=3,
            label=f"{case} (p50→p90)",
            color=colours[case],
        )
        ax.scatter(
            xs, p99, marker="_", s=120, color="black", zorder=3, label="p99" if c == 0 else None
        )
    ax.set_xticks(range(len(groups)), groups)
    ax.set_ylabel("latency per call (ms)")
    machine = result["machine"]
    ax.set_title(
        f"{result['model']} — {result['mode']} mode — {machine['cpu_model']} "
        f"({machine['cores']} cores)",
        fontsize=9,
    )
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        with atomic_file(path, mode=0o600) as out:
            fig.savefig(out, format="png")
    finally:
        plt.close(fig)


def run(args: argparse.Namespace) -> int:
    configure_logging(args.command_prog)
    require_dir(args.bundle, "bundle directory")
    if args.plot:
        # Checked before timing anything: a bad path found only at the end
        # would throw the whole benchmark away.
        check_output_path(args.plot, "--plot", example="bench.png")
    runner = Runner.open(args.bundle, runtime_logs=True if args.verbose else None)
    result = bench(runner, args.iterations, args.decode_steps)
    if args.plot:
        try:
            plot(result, Path(args.plot))
        except OSError as exc:
            # The figures cost minutes and must not be lost: the table is printed before
            # the error, and under --json the error document carries them.
            if not args.json:
                print(table(result))
            raise ResultWriteError(
                f"cannot write the chart ({exc.strerror or exc}); the results are on stdout",
                where=Where(args.plot, option="--plot"),
                result=result,
            ) from None
        result["plot"] = str(args.plot)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(table(result))
        if args.plot:
            print(f"chart written to {args.plot}")
    return 0


COMMAND = Command(
    "per-phase p50/p90/p99 latency under the policy, auto and the widest profile",
    add_arguments=add_arguments,
    run=run,
)
