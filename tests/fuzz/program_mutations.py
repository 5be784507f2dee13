"""Deterministic mutations of a bundle's `model.pte` and `bundle.json`, and what
`trt-edge-run` did with each: the fuzz of the C++ runner's program loader.

A mutation is a pure function of (seed, index): case `i` of seed `s` is the same
bytes on every machine and in every run, so a result file can be resumed, a
crash can be replayed, and a test can search for a crashing program and get the
same one each time. Mutations of `model.pte` recompute its sha256 and size in
`bundle.json` (as a corrupt build or a bad signed bundle would arrive: the
integrity rule passes and the program loader is what is tested); mutations of
`bundle.json` leave `model.pte` alone (its listed digest still matches).

Kinds:
    flip        1-8 random bytes XORed with a random non-zero value
    truncate    cut at a random offset
    insert      1-16 random bytes inserted at a random offset
    offset      a 4-byte aligned word inside the FlatBuffer (before the segments) set
                to a nearby or an extreme value: FlatBuffer offsets and lengths
    header      a field of the extended header (`eh00`: program size, segment base
                offset and size) set to a nearby or an extreme value
    json_bytes  bundle.json: flips, truncation or insertion on its text
    json_value  bundle.json: one number of it changed (a shape, an extent, an index)

Outcome of one run (`classify`): `ok`; `refused:<kind>` — a typed refusal, the exit
code of one of trt-edge-run's failure kinds with the matching JSON error document
on stdout; `crash:<SIGNAL>` — the runner died of a signal (contained: the parent
saw it); `timeout`; `unexpected:<why>` — anything else, which is a defect.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PTE_KINDS = ("flip", "truncate", "insert", "offset", "header")
JSON_KINDS = ("json_bytes", "json_value")
KINDS = PTE_KINDS + JSON_KINDS

# (kind, exit code) of trt-edge-run's interface, as runner_interface.py names them.
ARGS = ("--phases", "all", "--runs", "1", "--warmup", "0", "--json", "--progress")


@dataclass(frozen=True)
class Mutation:
    index: int
    kind: str
    detail: str
    pte: bytes
    bundle_json: bytes


def _rng(seed: int, index: int) -> random.Random:
    return random.Random(f"trt-edge-fuzz:{seed}:{index}")


def _near_or_extreme(rng: random.Random, value: int) -> int:
    choice = rng.randrange(6)
    if choice == 0:
        return 0xFFFFFFFF
    if choice == 1:
        return 0x7FFFFFFF
    if choice == 2:
        return 0
    if choice == 3:
        return rng.randrange(1 << 32)
    return (value + rng.choice((-8, -4, -1, 1, 4, 8, 64, 4096))) & 0xFFFFFFFF


def flatbuffer_end(pte: bytes) -> int:
    """Where the FlatBuffer part of a .pte ends: the extended header's program size."""
    if len(pte) >= 24 and pte[8:12] == b"eh00":
        size = int.from_bytes(pte[16:24], "little")
        if 0 < size <= len(pte):
            return size
    return len(pte)


def _mutate_bytes(rng: random.Random, data: bytes, kind: str) -> tuple[bytes, str]:
    buf = bytearray(data)
    if kind == "flip":
        spots = sorted(rng.randrange(len(buf)) for _ in range(rng.randint(1, 8)))
        for at in spots:
            buf[at] ^= rng.randint(1, 255)
        return bytes(buf), "xor at " + ",".join(map(str, spots))
    if kind == "truncate":
        at = rng.randrange(len(buf))
        return bytes(buf[:at]), f"cut at {at} of {len(buf)}"
    if kind == "insert":
        at = rng.randrange(len(buf) + 1)
        extra = bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
        return bytes(buf[:at] + extra + buf[at:]), f"{len(extra)} bytes at {at}"
    raise ValueError(kind)


def _mutate_pte(rng: random.Random, pte: bytes, kind: str) -> tuple[bytes, str]:
    if kind in ("flip", "truncate", "insert"):
        return _mutate_bytes(rng, pte, kind)
    buf = bytearray(pte)
    if kind == "offset":
        end = flatbuffer_end(pte)
        at = rng.randrange(0, max(4, end - 3)) & ~3
        old = int.from_bytes(buf[at : at + 4], "little")
        new = _near_or_extreme(rng, old)
        buf[at : at + 4] = new.to_bytes(4, "little")
        return bytes(buf), f"word at {at}: {old:#x} -> {new:#x}"
    if kind == "header":
        field = rng.choice((16, 24, 32))  # program size, segment base offset, segment size
        old = int.from_bytes(buf[field : field + 8], "little")
        choice = rng.randrange(4)
        new = (
            (1 << 64) - 1
            if choice == 0
            else 0
            if choice == 1
            else (old + rng.choice((-16, -1, 1, 16, 4096))) % (1 << 64)
        )
        buf[field : field + 8] = new.to_bytes(8, "little")
        return bytes(buf), f"header field at {field}: {old:#x} -> {new:#x}"
    raise ValueError(kind)


def _with_pte_digest(bundle_json: bytes, pte: bytes) -> bytes:
    doc = json.loads(bundle_json)
    doc["files"]["model.pte"] = {"sha256": hashlib.sha256(pte).hexdigest(), "size": len(pte)}
    return (json.dumps(doc, sort_keys=True, separators=(",", ":")) + "\n").encode()


def _mutate_json_value(rng: random.Random, text: bytes) -> tuple[bytes, str]:
    numbers = list(re.finditer(rb"(?<![\w.])-?\d+(?![\w.])", text))
    if not numbers:
        return _mutate_bytes(rng, text, "flip")
    match = rng.choice(numbers)
    old = int(match.group())
    new = rng.choice((0, -1, 1, old + 1, old - 1, old * 2, 2**31 - 1, 2**31, 2**62, -(2**31)))
    mutated = text[: match.start()] + str(new).encode() + text[match.end() :]
    return mutated, f"number at {match.start()}: {old} -> {new}"


def mutation(seed: int, index: int, pte: bytes, bundle_json: bytes) -> Mutation:
    """Case `index` of `seed`: which file, how, and the resulting bytes of both files."""
    rng = _rng(seed, index)
    kind = KINDS[rng.randrange(len(KINDS))]
    if kind in PTE_KINDS:
        new_pte, detail = _mutate_pte(rng, pte, kind)
        return Mutation(index, kind, detail, new_pte, _with_pte_digest(bundle_json, new_pte))
    if kind == "json_value":
        new_json, detail = _mutate_json_value(rng, bundle_json)
    else:
        how = rng.choice(("flip", "truncate", "insert"))
        new_json, detail = _mutate_bytes(rng, bundle_json, how)
    return Mutation(index, kind, detail, pte, new_json)


def write_case(source: Path, case: Mutation, into: Path) -> Path:
    """A bundle directory `into`: `source`'s files with the case's model.pte and bundle.json."""
    if into.exists():
        shutil.rmtree(into)
    shutil.copytree(source, into)
    (into / "model.pte").write_bytes(case.pte)
    (into / "bundle.json").write_bytes(case.bundle_json)
    return into


def signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


@dataclass(frozen=True)
class Outcome:
    kind: str  # ok | refused:<kind> | crash:<SIGNAL> | timeout | unexpected:<why>
    returncode: int | None
    seconds: float
    stage: str  # the last progress line: what ran when it stopped


def classify(returncode: int | None, stdout: str, stderr: str, exit_kinds: dict[int, str]) -> str:
    """The outcome kind of one trt-edge-run run (see the module docstring)."""
    if returncode is None:
        return "timeout"
    if returncode < 0:
        return f"crash:{signal_name(-returncode)}"
    try:
        doc: Any = json.loads(stdout.strip().splitlines()[-1]) if stdout.strip() else None
    except json.JSONDecodeError:
        return "unexpected:stdout is not JSON"
    if not isinstance(doc, dict) or doc.get("interface") != 1:
        return "unexpected:no interface-1 document"
    if returncode == 0:
        return "ok" if doc.get("ok") is True else "unexpected:exit 0 without ok"
    error = doc.get("error")
    if doc.get("ok") is not False or not isinstance(error, dict):
        return "unexpected:failure without an error document"
    kind = exit_kinds.get(returncode)
    if kind is None or error.get("kind") != kind or error.get("exit_code") != returncode:
        return f"unexpected:exit {returncode} with error kind {error.get('kind')!r}"
    if "Traceback" in stderr or "terminate called" in stderr:
        return "unexpected:uncaught exception"
    return f"refused:{kind}"


def last_stage(stderr: str) -> str:
    stages = re.findall(r"^trt-edge-run: progress: (.*)$", stderr, re.M)
    return stages[-1] if stages else ""


def run_case(
    runner: Sequence[str], bundle: Path, exit_kinds: dict[int, str], timeout: float
) -> Outcome:
    """Run `runner` (the command, e.g. [path] or [qemu, path]) on `bundle` and classify it."""
    started = time.perf_counter()
    try:
        done = subprocess.run(
            [*runner, "--bundle", str(bundle), *ARGS],
            capture_output=True,
            text=True,
            errors="replace",
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as expired:
        stderr = expired.stderr.decode(errors="replace") if expired.stderr else ""
        return Outcome("timeout", None, time.perf_counter() - started, last_stage(stderr))
    kind = classify(done.returncode, done.stdout, done.stderr, exit_kinds)
    return Outcome(kind, done.returncode, time.perf_counter() - started, last_stage(done.stderr))


def find_crash(
    runner: Sequence[str],
    source: Path,
    work: Path,
    exit_kinds: dict[int, str],
    *,
    seed: int = 0,
    limit: int = 3000,
    kinds: Sequence[str] = PTE_KINDS,
) -> tuple[Mutation, Outcome] | None:
    """The first case of `seed` (in index order, only mutations of `kinds`) that makes
    the runner die of a signal, or None within `limit` cases."""
    pte = (source / "model.pte").read_bytes()
    document = (source / "bundle.json").read_bytes()
    for index in range(limit):
        case = mutation(seed, index, pte, document)
        if case.kind not in kinds:
            continue
        bundle = write_case(source, case, work / "case")
        outcome = run_case(runner, bundle, exit_kinds, timeout=30.0)
        if outcome.kind.startswith("crash:"):
            return case, outcome
    return None
