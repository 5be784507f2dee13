"""Fuzz `trt-edge-run`'s program loader: N mutated `model.pte` / `bundle.json`, outcomes by kind.

    python tests/fuzz/fuzz_runner_programs.py \\
        --runner device_runner/cpp/build/runner/trt-edge-run \\
        --bundle dist/tiny-llm-0.1.0 --bundle dist/tiny-cnn-0.1.0 -n 10000 --jobs 2 \\
        --results fuzz-results.jsonl

Case `i` mutates bundle `i mod len(--bundle)` with mutation `i` of `--seed`
(tests/fuzz/program_mutations.py: byte flips, truncation, inserted bytes,
FlatBuffer offset and header corruption of model.pte with its digests recomputed,
and byte or value edits of bundle.json) and runs `trt-edge-run --phases all` on it
(1 run per phase, no warm-up). Every outcome must be `ok`, a typed refusal (an
exit code of the interface with its JSON error document) or a contained crash (a
death by a signal, which the parent sees); a timeout or anything else is reported
and makes the exit code 1.

Parallel (`--jobs` runner processes at a time) and resumable: each finished case
is one line of `--results` (JSON); a re-run with the same seed and bundles skips
the cases already there, so an interrupted 10,000-case run continues where it
stopped. The report gives the counts by outcome, by mutation kind, the crashes
(index, mutation, signal, stage: replay one with `--replay INDEX --keep DIR`) and
the wall time of this invocation.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout, for tests.fuzz
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "device_runner"))

from trt_edge_runner.runner_interface import EXIT_KINDS

from tests.fuzz.program_mutations import mutation, run_case, write_case


def _config(args: argparse.Namespace) -> dict[str, Any]:
    return {"seed": args.seed, "bundles": [str(b.resolve()) for b in args.bundle]}


def _load_done(path: Path, config: dict[str, Any]) -> dict[int, dict[str, Any]]:
    if not path.exists():
        return {}
    lines = path.read_text(encoding="utf-8").splitlines()
    if not lines:
        return {}
    header = json.loads(lines[0])
    if header.get("config") != config:
        raise SystemExit(
            f"{path}: holds results of another run ({header.get('config')}); "
            "pass another --results file or the same --seed and --bundle list"
        )
    done: dict[int, dict[str, Any]] = {}
    for line in lines[1:]:
        try:
            row = json.loads(line)
        except json.JSONDecodeError:  # a line cut short by an interruption: redo that case
            continue
        done[int(row["index"])] = row
    return done


def report(rows: list[dict[str, Any]], wall: float, ran: int) -> str:
    by_outcome = collections.Counter(row["outcome"] for row in rows)
    by_mutation: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for row in rows:
        by_mutation[row["mutation"]][row["outcome"]] += 1
    lines = [f"{len(rows)} cases ({ran} run now, in {wall:.1f} s wall)", "", "outcome  count"]
    lines += [f"  {kind:32s} {count:6d}" for kind, count in sorted(by_outcome.items())]
    lines += ["", "by mutation:"]
    for kind, counts in sorted(by_mutation.items()):
        parts = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
        lines.append(f"  {kind:10s} {parts}")
    crashes = [r for r in rows if r["outcome"].startswith("crash:")]
    if crashes:
        lines += ["", "contained crashes (index, bundle, mutation, stage):"]
        lines += [
            f"  {r['index']:6d} {Path(r['bundle']).name} {r['mutation']} {r['detail']}: "
            f"{r['outcome']} while {r['stage']}"
            for r in sorted(crashes, key=lambda r: int(r["index"]))
        ]
    bad = [r for r in rows if not r["outcome"].startswith(("ok", "refused:", "crash:"))]
    lines += ["", f"neither a typed refusal nor a contained crash: {len(bad)}"]
    lines += [f"  {r['index']:6d} {r['mutation']} {r['detail']}: {r['outcome']}" for r in bad]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runner", required=True, type=Path, help="the trt-edge-run binary")
    parser.add_argument("--bundle", required=True, type=Path, action="append")
    parser.add_argument("-n", type=int, default=1000, help="number of cases (default 1000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=2, help="runner processes at a time")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per case")
    parser.add_argument("--results", type=Path, default=Path("fuzz-results.jsonl"))
    parser.add_argument("--replay", type=int, default=None, help="write case INDEX, run it")
    parser.add_argument("--keep", type=Path, default=None, help="with --replay: where to write")
    args = parser.parse_args(argv)
    runner = [str(args.runner.resolve())]
    sources = [
        (b, (b / "model.pte").read_bytes(), (b / "bundle.json").read_bytes()) for b in args.bundle
    ]

    if args.replay is not None:
        source, pte, document = sources[args.replay % len(sources)]
        case = mutation(args.seed, args.replay, pte, document)
        where = args.keep or Path(tempfile.mkdtemp(prefix="fuzz-replay-"))
        bundle = write_case(source, case, where)
        outcome = run_case(runner, bundle, EXIT_KINDS, args.timeout)
        print(f"case {args.replay}: {case.kind} {case.detail} -> {outcome} ({bundle})")
        return 0

    config = _config(args)
    done = _load_done(args.results, config)
    todo = [i for i in range(args.n) if i not in done]
    lock = threading.Lock()
    local = threading.local()
    scratch = Path(tempfile.mkdtemp(prefix="fuzz-runner-"))
    if not args.results.exists() or not args.results.read_text(encoding="utf-8").strip():
        args.results.write_text(json.dumps({"config": config}) + "\n", encoding="utf-8")
    out = args.results.open("a", encoding="utf-8")

    def one(index: int) -> None:
        if not hasattr(local, "work"):
            local.work = Path(tempfile.mkdtemp(dir=scratch))
        source, pte, document = sources[index % len(sources)]
        case = mutation(args.seed, index, pte, document)
        bundle = write_case(source, case, local.work / "case")
        outcome = run_case(runner, bundle, EXIT_KINDS, args.timeout)
        row = {
            "index": index,
            "bundle": str(source),
            "mutation": case.kind,
            "detail": case.detail,
            "outcome": outcome.kind,
            "returncode": outcome.returncode,
            "stage": outcome.stage,
            "seconds": round(outcome.seconds, 4),
        }
        with lock:
            done[index] = row
            out.write(json.dumps(row) + "\n")
            out.flush()
            if len(done) % 500 == 0:
                print(f"  {len(done)}/{args.n} cases", file=sys.stderr, flush=True)

    started = time.perf_counter()
    try:
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            list(pool.map(one, todo))
    finally:
        out.close()
        import shutil

        shutil.rmtree(scratch, ignore_errors=True)
    wall = time.perf_counter() - started
    rows = [done[i] for i in sorted(done) if i < args.n]
    print(report(rows, wall, len(todo)))
    bad = [r for r in rows if not r["outcome"].startswith(("ok", "refused:", "crash:"))]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
