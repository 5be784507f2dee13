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
Then a staged rollout over `--devices` (8) devices, each in its own outbound-only network
namespace (`tests/helpers/nat_fleet.py`, needs root) running the real `follow` and `mqtt`
against the registry and a real mosquitto on the operator's side: how long the fleet takes
to follow the channel, a healthy rollout (waves 1, 25%, 100%) and its time to converge, then
a rollout in which one device of the last wave fails its health gate on purpose (a latency
budget no run meets, written into its device.json): the gate's decisions and the wave rolled
back. `--no-rollout` skips it.

Run: `.venv/bin/python benchmarks/bench_fleet_pull.py` (builds cached in ~/.cache/trt-edge);
`--bundle DIR [--quantized DIR]` measures a bundle built elsewhere instead of the mini (a
real-size one from `bench_llm_realsize.py`, say).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(REPO))  # the checkout, for tests.helpers and tests.llm
from bench_runner import cpp_binary  # noqa: E402

from tests.follow.bundle_variants import variant  # noqa: E402
from tests.helpers.nat_fleet import (  # noqa: E402
    NatDevice,
    nat_device,
    promote,
    publish,
    service_address,
)
from tests.helpers.netns import namespaces_unavailable, outbound_only_hosts  # noqa: E402
from tests.helpers.registry import registry_binary, running_registry  # noqa: E402
from tests.helpers.waits import wait_until  # noqa: E402
from tests.pull.broker import FLEET, start_broker  # noqa: E402

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


def version_of(device: NatDevice) -> object:
    return device.status().get("version")


def wait_on(device: NatDevice, version: str) -> None:
    def running() -> bool:
        return version_of(device) == version

    wait_until(running, f"{device.name} on {version}", timeout_s=600)


def rollout(work: Path, broker: Any, reference: str, version: str, names: list[str]) -> Any:
    """`trt-edge fleet rollout` over `names` to `version`; (seconds, its JSON report)."""
    plan = work / f"plan-{version}.yaml"
    plan.write_text(
        "bundle: unused.tar\nwaves: [1, '25%', '100%']\nfailure_threshold: 0\n"
        "on_halt: rollback_wave\n"
    )
    argv = [sys.executable, "-m", "trt_edge", "fleet", "rollout", str(plan)]
    argv += [*broker.flags("operator"), "--fleet", FLEET, "--reference", reference]
    argv += ["--version", version, "--wave-timeout", "600", "--json"]
    for name in names:
        argv += ["--device", name]
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, timeout=3600, check=False)
    seconds = time.perf_counter() - started
    try:
        return seconds, json.loads(done.stdout)
    except json.JSONDecodeError:
        raise RuntimeError(f"fleet rollout: exit {done.returncode}\n{done.stderr}") from None


def print_rollout(title: str, seconds: float, report: dict[str, Any]) -> None:
    print(
        f"\n{title}: {seconds:.1f} s, halted: {report['halted']} {report.get('halt_reason') or ''}"
    )
    for number, wave in enumerate(report["waves"], 1):
        rows = [d for d in report["devices"] if d["host"] in wave]
        cells = ", ".join(f"{d['host']} {d['result']}" for d in rows)
        print(f"  wave {number}: {cells}")
    for d in report["devices"]:
        if d["result"] not in ("updated", "not_attempted"):
            print(f"  {d['host']}: {d['reason']}")


def rollout_figures(
    work: Path, base: Path, key: Path, keys: Path, runner: Path, count: int
) -> None:
    """The staged rollout over `count` namespaced devices (see the module's docstring)."""
    binary = registry_binary()
    assert binary is not None
    names = [f"cam-{i:02d}" for i in range(1, count + 1)]
    v2 = variant(base, work / "r2.0.0", "2.0.0", key)
    v3 = variant(base, work / "r3.0.0", "3.0.0", key)
    with (
        service_address() as address,
        running_registry(binary, work / "nat-registry", address=address) as registry,
        outbound_only_hosts(count, first_index=101) as hosts,
    ):
        broker = start_broker(work / "nat-broker", tuple(names), address)
        repo = "fleet/cams"
        publish(base, registry.ref(repo, "1.0.0"), "stable")
        publish(v2, registry.ref(repo, "2.0.0"))
        publish(v3, registry.ref(repo, "3.0.0"))
        devices = [
            nat_device(name, host, work / "nat" / name, keys, runner)
            for name, host in zip(names, hosts, strict=True)
        ]
        try:
            started = time.perf_counter()
            for device in devices:
                device.start_follower(registry.ref(repo, "stable"))
            for device in devices:
                wait_on(device, "1.0.0")
            took = time.perf_counter() - started
            print(f"\n{count} namespaced devices followed the channel to 1.0.0 in {took:.1f} s")
            for device in devices:
                device.start_link(broker)
            seconds, report = rollout(work, broker, registry.ref(repo, "2.0.0"), "2.0.0", names)
            print_rollout("healthy rollout to 2.0.0", seconds, report)
            on = sum(version_of(d) == "2.0.0" for d in devices)
            print(f"  converged: {on} of {count} devices run 2.0.0")
            failing = devices[-2]  # in the last wave
            budget = {"health": {"latency_budget_ms": 1e-6}}
            failing.agent.config.write_text(json.dumps(budget))
            failing.restart_link(broker)
            seconds, report = rollout(work, broker, registry.ref(repo, "3.0.0"), "3.0.0", names)
            print_rollout(f"rollout to 3.0.0, {failing.name} failing its gate", seconds, report)
            versions = {d.name: version_of(d) for d in devices}
            print(f"  afterwards: {versions}")
            promote(registry.ref(repo, "2.0.0"), "stable")
        finally:
            for device in devices:
                device.stop()
            broker.stop()


def main() -> int:
    from trt_edge.signing import generate_keypair

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--devices", type=int, default=8, help="namespaced devices (default 8)")
    parser.add_argument("--no-rollout", action="store_true", help="bytes only, no rollout")
    parser.add_argument(
        "--bundle",
        type=Path,
        default=None,
        help="a built LLM bundle directory to measure instead of the mini (e.g. one of "
        "bench_llm_realsize.py's real-size builds)",
    )
    parser.add_argument(
        "--quantized", type=Path, default=None, help="with --bundle: its quantized build"
    )
    args = parser.parse_args()

    binary = registry_binary()
    if binary is None:
        print("docker-registry is not installed (.ci/sysdeps installs it)")
        return 1
    runner = cpp_binary()
    with tempfile.TemporaryDirectory(prefix="bench-fleet-pull-") as tmp:
        work = Path(tmp)
        fp32, quantized = (args.bundle, args.quantized) if args.bundle else build_minis(work)
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
        quant = (
            variant(quantized, work / "v1.3.0", "1.3.0", pair.private_path)
            if quantized is not None
            else None
        )

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
            ]
            if quant is not None:
                steps.append(("quantization change", quant))
            for what, bundle in steps:
                version = json.loads((bundle / "bundle.json").read_bytes())["model"]["version"]
                ref = registry.ref("fleet/mini-qwen3", version)
                run([sys.executable, "-m", "trt_edge", "publish", str(bundle), ref])
                run([sys.executable, "-m", "trt_edge", "promote", ref, "stable"])
                follow = ["follow", channel, "--once", "--json", "--smoke-runs", "1"]
                out = run([sys.executable, "-m", "trt_edge_runner.device_cli", *follow], env)
                state = json.loads(out)
                rows.append((what, version, state, bundle_bytes(bundle)))
        print_bytes(rows)
        rollout_part(args, work, base, pair.private_path, keys)
    return 0


def print_bytes(rows: list[tuple[str, str, dict[str, Any], int]]) -> None:
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


def rollout_part(args: argparse.Namespace, work: Path, base: Path, key: Path, keys: Path) -> None:
    if args.no_rollout:
        return
    reason = namespaces_unavailable()
    if reason is not None:
        print(f"\nno rollout figures: {reason}")
        return
    rollout_figures(work, base, key, keys, cpp_binary(), args.devices)


if __name__ == "__main__":
    sys.exit(main())
