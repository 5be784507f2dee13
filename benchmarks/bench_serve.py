"""The service (`trt-edge-device serve`) against one `trt-edge-run --generate` per request,
measured side by side in one run on one bundle.

    .venv/bin/python benchmarks/bench_serve.py [--bundle DIR] [--runner PATH] [--requests 16]
        [--prompt-len 32] [--new-tokens 32] [--concurrency 1,4,8] [--slots-bundle DIR]

Default bundle: the upstream seed's mini Gemma-3 (examples/gemma3, `max_cache_len` 512),
built like `bench_llm.py` builds it (or reused from its cache under
~/.cache/trt-edge/bench-serve). Every request is greedy over token ids (no tokenizer in the
timing), so the served tokens equal the one-shot runner's.

At each concurrency (1, 4, 8 clients, each sending its share of `--requests` back to back):
- served: streaming `/v1/completions` over HTTP (httpx, SSE): requests/s, p50/p99 time to
  first token (the first `data:` event) and latency (to `data: [DONE]`);
- one-shot: a `trt-edge-run --generate --json` process per request, the same number in
  parallel: requests/s, latency (process wall), and time to first token = the process's
  wall before generation started (start, integrity check, load) + its own
  `time_to_first_token_ms` (the process prints nothing before it ends);
printed side by side with served ÷ one-shot ratios, and aggregate generated tokens/s. With
`--slots-bundle` (the same model built with `runtime.slots` N), a second service serves it
and each level gets a `slots` column beside them: its engine runs up to N requests at once
(continuous batching, docs/serving.md), against the first service's one at a time. At
concurrency 1 the served time to first token is also set against the engine's own prefill
time per request (from the service's `/metrics`). Then, at concurrency 1 with served and
one-shot requests interleaved (so both see the same load): served decode tokens/s (client
side, between the first and last token event) ÷ the runner's own `decode_tokens_per_s` (its
decode executions) and ÷ its wall rate (tokens after the first over their wall time) and ÷
its rate with `--single-thread` (how the service runs the engine on two cores), with the
engine's own decode rate inside the service beside them; time to first token of a follow-up
sharing a long prefix with the previous request (the engine reuses its cache) vs after an
unrelated request (cold); and the service's RSS (front end + engine).

Figures, never asserted; the machine is shared (load average printed). Exits 0 whether any
goal is met; 1 when a measurement cannot be taken.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import json
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_llm import load, recipe_bundle, write_seed_folder  # noqa: E402
from bench_runner import cpp_binary  # noqa: E402

WORK = Path.home() / ".cache" / "trt-edge" / "bench-serve"


@dataclass(frozen=True)
class Sample:
    ttft: float
    latency: float
    tokens: int
    decode_s: float  # first token event to last


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def prompt_ids(length: int, salt: int = 0) -> list[int]:
    return [4 + (7 * i + 13 * salt) % 500 for i in range(length)]


# ---- the service -------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def start_service(bundle: Path, runner: Path, log: Path) -> tuple[subprocess.Popen[bytes], str]:
    import httpx

    port = free_port()
    argv = [sys.executable, "-m", "trt_edge_runner.device_cli", "serve", "--bundle", str(bundle)]
    argv += ["--runner", str(runner), "--port", str(port), "--max-queue", "64"]
    with log.open("wb") as handle:
        process = subprocess.Popen(argv, stdout=handle, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if process.poll() is not None:
            sys.exit(f"the service exited {process.returncode}:\n{log.read_text()[-3000:]}")
        try:
            if httpx.get(f"{url}/v2/health/ready", timeout=5).status_code == 200:
                return process, url
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    sys.exit(f"the service was not ready in 300 s:\n{log.read_text()[-3000:]}")


async def served_request(client: Any, url: str, prompt: list[int], new_tokens: int) -> Sample:
    body = {"prompt": prompt, "max_tokens": new_tokens, "temperature": 0, "stream": True}
    started = time.perf_counter()
    first = last = 0.0
    tokens = 0
    async with client.stream("POST", f"{url}/v1/completions", json=body) as response:
        if response.status_code != 200:
            sys.exit(f"served request failed: {response.status_code} {await response.aread()!r}")
        async for line in response.aiter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            now = time.perf_counter()
            chunk = json.loads(line[6:])
            if "error" in chunk:
                sys.exit(f"served request failed mid-stream: {chunk['error']}")
            if chunk["choices"] and chunk["choices"][0]["finish_reason"] is None:
                tokens += 1
                first = first or now
                last = now
    end = time.perf_counter()
    return Sample(first - started, end - started, tokens, last - first)


async def served_level(
    url: str, concurrency: int, requests: int, args: argparse.Namespace
) -> tuple[list[Sample], float]:
    import httpx

    per_client = max(1, requests // concurrency)
    async with httpx.AsyncClient(timeout=600) as client:

        async def one_client(n: int) -> list[Sample]:
            return [
                await served_request(
                    client, url, prompt_ids(args.prompt_len, n * 100 + i), args.new_tokens
                )
                for i in range(per_client)
            ]

        started = time.perf_counter()
        results = await asyncio.gather(*(one_client(n) for n in range(concurrency)))
        wall = time.perf_counter() - started
    return [s for batch in results for s in batch], wall


# ---- one process per request -------------------------------------------------------------
def oneshot_request(
    runner: Path, bundle: Path, prompt: list[int], new_tokens: int, *flags: str
) -> tuple[Sample, dict[str, Any]]:
    argv = [str(runner), "generate", "--bundle", str(bundle), "--json", *flags]
    argv += ["--prompt-ids", ",".join(map(str, prompt)), "--max-new-tokens", str(new_tokens)]
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"{runner} --generate failed (exit {done.returncode}):\n{done.stderr[-2000:]}")
    doc: dict[str, Any] = json.loads(done.stdout)
    timings = doc["timings"]
    before_generation = wall - timings["total_ms"] / 1000.0
    ttft = before_generation + timings["time_to_first_token_ms"] / 1000.0
    return Sample(ttft, wall, len(doc["tokens"]), 0.0), doc


def oneshot_level(
    runner: Path, bundle: Path, concurrency: int, requests: int, args: argparse.Namespace
) -> tuple[list[Sample], float]:
    per_client = max(1, requests // concurrency)
    jobs = [
        prompt_ids(args.prompt_len, n * 100 + i)
        for n in range(concurrency)
        for i in range(per_client)
    ]
    started = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(concurrency) as pool:
        samples = list(
            pool.map(lambda p: oneshot_request(runner, bundle, p, args.new_tokens)[0], jobs)
        )
    return samples, time.perf_counter() - started


# ---- report --------------------------------------------------------------------------------
def ms(seconds: float) -> str:
    return f"{seconds * 1000:8.1f}"


def report_level(
    concurrency: int,
    served: tuple[list[Sample], float],
    oneshot: tuple[list[Sample], float],
    slots: tuple[list[Sample], float] | None = None,
) -> None:
    """One level's table: served, one-shot, their ratio; with `slots`, the slots bundle's
    service and its ratio to the one-request-at-a-time service."""
    (s, s_wall), (o, o_wall) = served, oneshot
    s_rps, o_rps = len(s) / s_wall, len(o) / o_wall
    rows = [
        ("requests/s", s_rps, o_rps, "{:8.2f}"),
        (
            "tokens/s",
            sum(x.tokens for x in s) / s_wall,
            sum(x.tokens for x in o) / o_wall,
            "{:8.1f}",
        ),
        (
            "TTFT p50 ms",
            percentile([x.ttft for x in s], 0.5),
            percentile([x.ttft for x in o], 0.5),
            None,
        ),
        (
            "TTFT p99 ms",
            percentile([x.ttft for x in s], 0.99),
            percentile([x.ttft for x in o], 0.99),
            None,
        ),
        (
            "latency p50 ms",
            percentile([x.latency for x in s], 0.5),
            percentile([x.latency for x in o], 0.5),
            None,
        ),
        (
            "latency p99 ms",
            percentile([x.latency for x in s], 0.99),
            percentile([x.latency for x in o], 0.99),
            None,
        ),
    ]
    extra = [] if slots is None else level_values(*slots)
    print(f"\nconcurrency {concurrency} ({len(s)} requests each side)")
    head = f"  {'':16} {'served':>9} {'one-shot':>9} {'served/one-shot':>16}"
    print(head + (f" {'slots':>9} {'slots/served':>13}" if slots is not None else ""))
    for k, (name, a, b, fmt) in enumerate(rows):
        text_a = fmt.format(a) if fmt else ms(a)
        text_b = fmt.format(b) if fmt else ms(b)
        line = f"  {name:16} {text_a:>9} {text_b:>9} {a / b:16.3f}"
        if extra:
            text_c = fmt.format(extra[k]) if fmt else ms(extra[k])
            line += f" {text_c:>9} {extra[k] / a:13.3f}"
        print(line)


def level_values(samples: list[Sample], wall: float) -> list[float]:
    """A level's figures in report_level's row order."""
    return [
        len(samples) / wall,
        sum(x.tokens for x in samples) / wall,
        percentile([x.ttft for x in samples], 0.5),
        percentile([x.ttft for x in samples], 0.99),
        percentile([x.latency for x in samples], 0.5),
        percentile([x.latency for x in samples], 0.99),
    ]


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def engine_pids(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found.extend(int(t) for t in (task / "children").read_text().split())
    return found


def engine_totals(url: str) -> dict[str, float]:
    """The service's `trt_edge_execute_seconds` sums and counts per phase (all profiles)."""
    import httpx

    totals: dict[str, float] = {}
    for line in httpx.get(f"{url}/metrics", timeout=30).text.splitlines():
        for kind in ("sum", "count"):
            head = f"trt_edge_execute_seconds_{kind}{{"
            if line.startswith(head):
                labels, _, value = line[len(head) :].rpartition("} ")
                phase = labels.split('phase="', 1)[1].split('"', 1)[0]
                key = f"{phase}_{kind}"
                totals[key] = totals.get(key, 0.0) + float(value)
    return totals


def engine_delta(before: dict[str, float], after: dict[str, float], phase: str) -> float:
    """Seconds per execution of `phase` in the engine between two `engine_totals`."""
    calls = after.get(f"{phase}_count", 0.0) - before.get(f"{phase}_count", 0.0)
    seconds = after.get(f"{phase}_sum", 0.0) - before.get(f"{phase}_sum", 0.0)
    return seconds / calls if calls else float("nan")


@dataclass(frozen=True)
class DecodeRates:
    served: float  # tokens/s a client sees (first token event to last)
    engine: float  # tokens/s of the engine's decode executions inside the service
    runner: float  # the one-shot runner's own decode_tokens_per_s (its executions)
    runner_wall: float  # the one-shot runner's tokens after the first / their wall time
    runner_single: float  # the same with --single-thread (as the service runs it on 2 cores)


def decode_rates(url: str, runner: Path, bundle: Path, args: argparse.Namespace) -> DecodeRates:
    """Concurrency 1, interleaved: a served request, then a one-shot one, `rounds` x 2 times,
    so both sides see the same moments of a shared machine's load."""
    served, engine, own, wall, single = [], [], [], [], []
    for i in range(args.rounds * 2):
        prompt = prompt_ids(args.prompt_len, 900 + i)
        before = engine_totals(url)
        sample = asyncio.run(served_one(url, prompt, args.new_tokens))
        after = engine_totals(url)
        if sample.tokens > 1 and sample.decode_s > 0:
            served.append((sample.tokens - 1) / sample.decode_s)
            engine.append(1.0 / engine_delta(before, after, "decode"))
        doc = oneshot_request(runner, bundle, prompt, args.new_tokens)[1]
        timings = doc["timings"]
        own.append(float(timings["decode_tokens_per_s"]))
        decode_ms = float(timings["total_ms"]) - float(timings["time_to_first_token_ms"])
        wall.append((len(doc["tokens"]) - 1) / (decode_ms / 1000.0))
        alone = oneshot_request(runner, bundle, prompt, args.new_tokens, "--single-thread")[1]
        single.append(float(alone["timings"]["decode_tokens_per_s"]))
    median = statistics.median
    return DecodeRates(median(served), median(engine), median(own), median(wall), median(single))


async def served_one(url: str, prompt: list[int], new_tokens: int) -> Sample:
    import httpx

    async with httpx.AsyncClient(timeout=600) as client:
        return await served_request(client, url, prompt, new_tokens)


async def prefix_reuse(url: str, args: argparse.Namespace, prefix_len: int) -> tuple[float, float]:
    """TTFT of a follow-up sharing `prefix_len` tokens with the previous request vs after an
    unrelated one (the engine's kept cache does not match: a cold prefill)."""
    import httpx

    prefix = prompt_ids(prefix_len, 7)
    follow = [*prefix, 11, 12, 13, 14]
    other = prompt_ids(prefix_len, 8)
    warm, cold = [], []
    async with httpx.AsyncClient(timeout=600) as client:
        for _ in range(args.rounds):
            await served_request(client, url, prefix, 1)
            warm.append((await served_request(client, url, follow, 1)).ttft)
            await served_request(client, url, other, 1)
            cold.append((await served_request(client, url, follow, 1)).ttft)
    return statistics.median(warm), statistics.median(cold)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--bundle", type=Path, default=None)
    parser.add_argument("--runner", type=Path, default=None)
    parser.add_argument("--requests", type=int, default=16)
    parser.add_argument("--prompt-len", type=int, default=32)
    parser.add_argument("--new-tokens", type=int, default=32)
    parser.add_argument("--concurrency", default="1,4,8")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--slots-bundle",
        type=Path,
        default=None,
        help="the same model built with runtime.slots: served beside, a `slots` column",
    )
    args = parser.parse_args()
    runner = args.runner or cpp_binary()
    if args.bundle is None:
        write_seed_folder(WORK)
        args.bundle = recipe_bundle(WORK, 512)
    bundle: Path = args.bundle
    doc = json.loads((bundle / "bundle.json").read_text())
    cache_len = int(doc["llm"]["max_cache_len"])
    print(f"bundle {doc['model']['name']} {doc['model']['version']} ({bundle}), cache {cache_len}")
    print(f"prompt {args.prompt_len} tokens, {args.new_tokens} new, greedy; {load()}")
    with tempfile.TemporaryDirectory(prefix="bench-serve-") as scratch:
        process, url = start_service(bundle, runner, Path(scratch) / "service.log")
        slots_url = None
        if args.slots_bundle is not None:
            slots_process, slots_url = start_service(
                args.slots_bundle, runner, Path(scratch) / "slots-service.log"
            )
        try:
            asyncio.run(served_level(url, 1, 2, args))  # warm: page cache, first allocations
            if slots_url is not None:
                asyncio.run(served_level(slots_url, 1, 2, args))
            single: tuple[list[Sample], list[Sample], float] | None = None
            for level in (int(c) for c in args.concurrency.split(",")):
                before = engine_totals(url)
                served = asyncio.run(served_level(url, level, args.requests, args))
                prefill_s = engine_delta(before, engine_totals(url), "prefill")
                oneshot = oneshot_level(runner, bundle, level, args.requests, args)
                slotted = None
                if slots_url is not None:
                    slotted = asyncio.run(served_level(slots_url, level, args.requests, args))
                report_level(level, served, oneshot, slotted)
                if level == 1:
                    single = (served[0], oneshot[0], prefill_s)
            if single is not None:
                s_ttft = statistics.median(x.ttft for x in single[0])
                o_ttft = statistics.median(x.ttft for x in single[1])
                print(
                    f"\nTTFT at 1 client: served p50 {s_ttft * 1000:.1f} ms; one-shot p50 "
                    f"{o_ttft * 1000:.1f} ms ({o_ttft / s_ttft:.1f}x faster served, goal >= 10x); "
                    f"the engine's own prefill {single[2] * 1000:.1f} ms per request "
                    f"(served / prefill {s_ttft / single[2]:.2f}, goal <= 1.05)"
                )
            # Decode rate at concurrency 1, served and one-shot interleaved.
            rates = decode_rates(url, runner, bundle, args)
            print(
                f"decode tokens/s: served {rates.served:.1f} (the engine's executions in the "
                f"service {rates.engine:.1f}); runner's own {rates.runner:.1f} (its wall "
                f"{rates.runner_wall:.1f}, with --single-thread {rates.runner_single:.1f}); "
                f"served / runner's own {rates.served / rates.runner:.3f} (goal >= 0.95), "
                f"/ its wall {rates.served / rates.runner_wall:.3f}, "
                f"/ its --single-thread {rates.served / rates.runner_single:.3f}"
            )
            prefix_len = min(512, cache_len - 16)
            warm, cold = asyncio.run(prefix_reuse(url, args, prefix_len))
            print(
                f"follow-up TTFT sharing a {prefix_len}-token prefix: with reuse "
                f"{warm * 1000:.1f} ms, cold {cold * 1000:.1f} ms, {cold / warm:.1f}x faster "
                "(goal >= 5x)"
            )
            engines = engine_pids(process.pid)
            front, engine = rss_kib(process.pid), sum(rss_kib(p) for p in engines)
            print(f"service RSS: front end {front / 1024:.1f} MiB + engine {engine / 1024:.1f} MiB")
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(60)
            if slots_url is not None:
                slots_process.send_signal(signal.SIGTERM)
                slots_process.wait(60)
    return 0


if __name__ == "__main__":
    sys.exit(main())
