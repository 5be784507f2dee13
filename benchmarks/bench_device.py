"""`trt-edge-device health` wall time ÷ `trt-edge-run --bench 3`, side by side, same bundle.

The device agent runs every phase of the active bundle in the C++ runner (a child
process, `--phases all`): its health check should cost about what the runner alone
costs to load the bundle and time a few executions. This builds (or reuses, through
the build cache) the tiny-LLM example, signs and packs it, makes a device-faithful
agent (a fresh venv holding only `trt-edge-runner[agent]`, byte-compiled as pip
installs it: tests/device_tarball/agent_venv.py), installs the bundle on a temporary
device root, then times in one run, interleaved, `REPEAT` times each:

- `trt-edge-device health --json` (the whole CLI: Python start-up, runner discovery,
  its `--version` check, `trt-edge-run --phases all --runs 15 --warmup 2`: decode and
  prefill, each at its profile's opt shape), wall time;
- `trt-edge-run --bundle SLOT --phase decode --bench 3` (load, verify, one decode,
  3 warm-up + 3 timed runner/raw pairs), wall time — the issue's yardstick;
- `trt-edge-run --bundle SLOT --phases all --runs 15 --warmup 2` (the very executions
  health asks the runner for), wall time: health ÷ this is the agent's own cost;

and, once, `trt-edge-device health --engine python` (ExecuTorch's Python runtime in
the agent: what every health check cost before), for the record.

Goal (issue 12): health ÷ bench ≤ 2 (before: ≈ 17 s vs 0.13 s). Health does more
work than `--bench 3` (every phase: the tiny LLM's prefill at its opt seq 128 costs
~40x a decode, four times), so the like-for-like ratio is printed too. Exits 0 whether
the goal is met or not (a figure, not a test); 1 when a measurement cannot be taken.
`REPEAT` (default 7) and `SKIP_PYTHON_ENGINE=1` adjust it.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from trt_edge_runner.agent.config import DEFAULT_LATENCY_RUNS, DEFAULT_WARMUP_RUNS

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(REPO))  # the checkout, for tests.device_tarball
from bench_runner import cpp_binary, tiny_llm_bundle  # noqa: E402

from tests.device_tarball.agent_venv import clean_env, make_agent_venv  # noqa: E402

REPEAT = int(os.environ.get("REPEAT", "7"))


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, subprocess.CompletedProcess[str]]:
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, env=env, check=False, timeout=900)
    return time.perf_counter() - started, done


def main() -> int:
    from trt_edge.pipeline.bundle_tar import write_bundle_tar
    from trt_edge.signing import generate_keypair, sign_bundle

    runner = cpp_binary()
    source = tiny_llm_bundle()
    with tempfile.TemporaryDirectory(prefix="bench-device-") as scratch:
        work = Path(scratch)
        import shutil

        bundle = Path(shutil.copytree(source, work / source.name))
        pair = generate_keypair(work / "keys")
        sign_bundle(bundle, pair.private_path)
        trusted = work / "trusted"
        trusted.mkdir()
        shutil.copy(pair.public_path, trusted / "publisher.pub")
        tar = write_bundle_tar(bundle, work / "bundle.tar")
        facts = work / "facts.json"
        facts.write_text(json.dumps({"arch": os.uname().machine}))
        venv = make_agent_venv(work / "agent")
        env = {
            **clean_env(),
            "TRT_EDGE_ROOT": str(work / "device"),
            "TRT_EDGE_KEYS": str(trusted),
            "TRT_EDGE_FACTS": str(facts),
            "TRT_EDGE_CONFIG": str(work / "device.json"),
            "TRT_EDGE_RUNNER": str(runner),
        }
        agent = [str(venv.device_cli)]
        installed = subprocess.run(
            [*agent, "install", str(tar)], capture_output=True, text=True, env=env, check=False
        )
        if installed.returncode != 0:
            print(f"install failed:\n{installed.stderr}", file=sys.stderr)
            return 1
        slot = work / "device" / "current"
        health_cmd = [*agent, "health", "--json", "--max-regression", "1000"]
        bench_cmd = [str(runner), "run", "--bundle", str(slot), "--phase", "decode", "--bench", "3"]
        phases_cmd = [str(runner), "phases", "--bundle", str(slot)]
        phases_cmd += ["--runs", str(DEFAULT_LATENCY_RUNS), "--warmup", str(DEFAULT_WARMUP_RUNS)]
        phases_cmd += ["--json"]
        health_s, bench_s, phases_s = [], [], []
        for _ in range(REPEAT):  # interleaved: load drift hits both alike
            seconds, done = timed(health_cmd, env)
            if done.returncode != 0:
                print(f"health failed:\n{done.stdout}{done.stderr}", file=sys.stderr)
                return 1
            health_s.append(seconds)
            seconds, done = timed(bench_cmd, env)
            if done.returncode != 0:
                print(f"trt-edge-run --bench failed:\n{done.stderr}", file=sys.stderr)
                return 1
            bench_s.append(seconds)
            seconds, done = timed(phases_cmd, env)
            if done.returncode != 0:
                print(f"trt-edge-run --phases failed:\n{done.stderr}", file=sys.stderr)
                return 1
            phases_s.append(seconds)
        health, bench = statistics.median(health_s), statistics.median(bench_s)
        phases = statistics.median(phases_s)
        python_start = statistics.median(
            timed([str(venv.python), "-c", "pass"], env)[0] for _ in range(REPEAT)
        )
        print(f"bundle: {source.name} (tiny-LLM example), runner {runner}")
        print(f"agent: a fresh venv with {', '.join(sorted(venv.packages))}")
        print(f"trt-edge-device health (C++ engine): median {health * 1e3:.0f} ms of {REPEAT}")
        print(f"trt-edge-run --bench 3 (decode):      median {bench * 1e3:.0f} ms of {REPEAT}")
        runs = f"--runs {DEFAULT_LATENCY_RUNS}"
        print(f"trt-edge-run --phases all {runs}: median {phases * 1e3:.0f} ms of {REPEAT}")
        print(f"python -c pass (interpreter start):  median {python_start * 1e3:.0f} ms")
        print(f"health / bench = {health / bench:.2f} (goal <= 2)")
        print(f"health / the same runs in trt-edge-run alone = {health / phases:.2f}")
        if os.environ.get("SKIP_PYTHON_ENGINE") != "1":  # the host venv has the runtime
            python_agent = [sys.executable, "-m", "trt_edge_runner.device_cli", *health_cmd[1:]]
            python_env = {**env, "PYTHONPATH": f"{REPO / 'device_runner'}"}
            seconds, done = timed([*python_agent, "--engine", "python"], python_env)
            state = "ok" if done.returncode == 0 else f"exit {done.returncode}"
            print(
                f"trt-edge-device health --engine python (before): {seconds:.1f} s ({state}), "
                f"{seconds / health:.0f}x the C++ engine's"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
