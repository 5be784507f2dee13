"""Bytes a device downloads to follow a channel, per kind of update, against the full bundle.

A real registry (docker-registry on loopback, `tests.helpers.registry`), the real
`trt-edge publish`/`promote` and `trt-edge-device follow --once` (installing through the C++
runner's smoke runs), on the Qwen3 mini LLM bundle built by the real pipeline (fp32, weights
in `model.ptd`) and its 8da4w-quantized build. One device follows `stable` while it moves:

1. the first install (the full bundle: every blob);
2. a tokenizer-only update (tokenizer.json changed);
3. a policy-only update (bundle.json's runtime policy pinned -> auto);
4. a quantization change (the 8da4w build: program and weights are new).

Bytes are the follower's own counter (`bytes_fetched` in ROOT/follow/state.json): what came
over the network, documents included. The goal is <= 1% of the bundle when the weights are
unchanged; the mini's weights are 0.4 MB, so its ratios are far above what a real model's
are: the same changed bytes against real weights are printed as well (arithmetic, labelled).
Run: `.venv/bin/python benchmarks/bench_fleet_pull.py` (builds cached in ~/.cache/trt-edge).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(REPO))  # the checkout, for tests.helpers and tests.llm
from bench_runner import cpp_binary  # noqa: E402

from tests.follow.bundle_variants import variant  # noqa: E402
from tests.helpers.registry import registry_binary, running_registry  # noqa: E402

# Weights of models people follow channels with (fp16 bytes), for the labelled projection.
REAL_WEIGHTS = {"Qwen3-0.6B fp16": 1_200_000_000, "Llama-3.2-1B int4": 700_000_000}


def bundle_bytes(bundle: Path) -> int:
    return sum(p.stat().st_size for p in bundle.rglob("*") if p.is_file())


def run(argv: list[str], env: dict[str, str] | None = None) -> str:
    done = subprocess.run(argv, capture_output=True, text=True, env=env, check=False, timeout=900)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: exit {done.returncode}\n{done.stdout}{done.stderr}")
    return done.stdout


def build_minis(work: Path) -> tuple[Path, Path]:
    from tests.llm.conftest import build_bundle
    from tests.llm.llm_folders import write_project
    from tests.llm.test_quantization import quantized_manifest

    manifest = write_project(work / "qwen3", "qwen3")
    fp32 = build_bundle(manifest, work / "qwen3" / "out")
    quantized = build_bundle(quantized_manifest(manifest, "manifest-8da4w.yaml"), work / "q")
    return fp32, quantized


def main() -> int:
    from trt_edge.signing import generate_keypair

    binary = registry_binary()
    if binary is None:
        print("docker-registry is not installed (.ci/sysdeps installs it)")
        return 1
    runner = cpp_binary()
    with tempfile.TemporaryDirectory(prefix="bench-fleet-pull-") as tmp:
        work = Path(tmp)
        fp32, quantized = build_minis(work)
        pair = generate_keypair(work / "keys")
        keys = work / "trusted"
        keys.mkdir()
        (keys / "publisher.pub").write_bytes(pair.public_path.read_bytes())
        base = variant(fp32, work / "v1.0.0", "1.0.0", pair.private_path)
        tokenizer = json.loads((base / "tokenizer.json").read_bytes())
        tokenizer["normalizer"] = {"type": "NFC"}
        tok = variant(
            base,
            work / "v1.1.0",
            "1.1.0",
            pair.private_path,
            {"tokenizer.json": json.dumps(tokenizer).encode()},
        )

        def auto(doc: dict[str, Any]) -> None:
            doc["runtime"]["policy"] = "auto"

        policy = variant(tok, work / "v1.2.0", "1.2.0", pair.private_path, edit=auto)
        quant = variant(quantized, work / "v1.3.0", "1.3.0", pair.private_path)

        facts = work / "facts.json"
        facts.write_text(json.dumps({"arch": os.uname().machine}))
        env = {
            **os.environ,
            "TRT_EDGE_ROOT": str(work / "device"),
            "TRT_EDGE_KEYS": str(keys),
            "TRT_EDGE_FACTS": str(facts),
            "TRT_EDGE_CONFIG": str(work / "device.json"),
            "TRT_EDGE_RUNNER": str(runner),
        }
        rows = []
        with running_registry(binary, work / "registry") as registry:
            channel = registry.ref("fleet/mini-qwen3", "stable")
            steps = [
                ("first install (full bundle)", base),
                ("tokenizer only", tok),
                ("policy only", policy),
                ("quantization change", quant),
            ]
            for what, bundle in steps:
                version = json.loads((bundle / "bundle.json").read_bytes())["model"]["version"]
                ref = registry.ref("fleet/mini-qwen3", version)
                run([sys.executable, "-m", "trt_edge", "publish", str(bundle), ref])
                run([sys.executable, "-m", "trt_edge", "promote", ref, "stable"])
                follow = ["follow", channel, "--once", "--json", "--smoke-runs", "1"]
                out = run([sys.executable, "-m", "trt_edge_runner.device_cli", *follow], env)
                state = json.loads(out)
                rows.append((what, version, state, bundle_bytes(bundle)))
    print(f"{'update':<30}{'version':>9}{'fetched B':>12}{'bundle B':>11}{'ratio':>9}  blobs")
    for what, version, state, full in rows:
        ratio = state["bytes_fetched"] / full
        blobs = f"{state['blobs_fetched']} fetched, {state['blobs_reused']} reused"
        print(f"{what:<30}{version:>9}{state['bytes_fetched']:>12}{full:>11}{ratio:>8.2%}  {blobs}")
    print("\nthe same changed bytes against real weights (arithmetic, not measured):")
    for what, _version, state, _full in rows[1:3]:
        for model, weights in REAL_WEIGHTS.items():
            share = state["bytes_fetched"] / (weights + state["bytes_fetched"])
            print(f"  {what:<16} {model:<20} {share:.4%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
