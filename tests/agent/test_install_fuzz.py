"""Fuzzed install input: mutated bundle tars (`tar_mutations`) fed to the real install
transaction (`install_bundle`, the code `trt-edge-device install` runs, smoke run included)
on a device whose active model is a real signed bundle.

For every tar: the outcome is a typed refusal (`TrtEdgeError`) or a valid install; nothing
is written outside the inactive slot (the whole device root is compared before and after,
and so are a canary directory beside it, the keys and every place an escaping name could
land); the model active before stays active and whole unless the install succeeded; and
after all of them the active model runs.

The suite runs `TRT_EDGE_FUZZ_TARS` deterministic mutants (default 300) plus
`TRT_EDGE_FUZZ_HYPOTHESIS` hypothesis-drawn ones (default 60); the full run for a report
is `TRT_EDGE_FUZZ_TARS=10000`, with `TRT_EDGE_FUZZ_REPORT=FILE` for the tally as JSON. A
sample also goes through the real CLI (`trt-edge-device install`): no traceback, exit 0/1.
"""

from __future__ import annotations

import collections
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import time
import traceback
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from trt_edge_runner.agent.config import FoundRunner
from trt_edge_runner.agent.install import install_bundle
from trt_edge_runner.agent.runner_process import RunnerProcess
from trt_edge_runner.agent.smoke import CppExecutor
from trt_edge_runner.agent.store import DeviceStore
from trt_edge_runner.bundle_integrity import verify_directory
from trt_edge_runner.errors import TrtEdgeError
from trt_edge_runner.signature import read_canonical_manifest

from tests.agent.tar_mutations import (
    BYTES,
    RESIGNED,
    STRUCTURE,
    Member,
    Recipe,
    draw_recipe,
    mutate,
    read_members,
)
from tests.agent.test_agent import run_model
from tests.helpers.bundles import detached_signature
from tests.helpers.fixtures_bundles import Bundles

FUZZ_TARS = int(os.environ.get("TRT_EDGE_FUZZ_TARS", "300"))
HYPOTHESIS_TARS = int(os.environ.get("TRT_EDGE_FUZZ_HYPOTHESIS", "60"))
CLI_SAMPLE = 12
FACTS: dict[str, str | None] = {"arch": "x86_64"}
ROOT_FILES = {"agent.lock", "current", "slots", "staging", "state.json"}

Snapshot = dict[str, tuple[str, str]]

# Why an install was refused, from its message: for the tally only (every refusal counts).
REASONS = (
    ("compressed archive", "-compressed archive"),
    ("not a tar", "not a readable tar archive"),
    ("damaged archive", "damaged archive"),
    ("too many members", "entries; not a trt-edge bundle"),
    ("document missing", "missing from the archive"),
    ("document not a plain file", "not a regular file"),
    ("document truncated", "truncated in the archive"),
    ("document too large", "bytes, more than"),
    ("integrity rule, extracted", "(as extracted)"),
    ("integrity rule, archive", "problem with the bundle's files"),
    ("integrity rule, archive", "problems with the bundle's files"),
    ("signature", "signature does not match"),
    ("untrusted key", "which is not trusted here"),
    ("signature document", "bundle.sig"),
    ("no bundle.json", "no bundle.json inside"),
    ("bundle.json not canonical", "not in canonical form"),
    ("bundle.json malformed", "bundle.json"),
    ("target mismatch", "which does not match this device"),
    ("anti-rollback", "(anti-rollback)"),
    ("unorderable version", "is not a version a device can order"),
    ("smoke run failed", "smoke run of"),
)


def reason(message: str) -> str:
    return next((name for name, marker in REASONS if marker in message), "other")


def snapshot(top: Path) -> Snapshot:
    """Every entry below `top`: kind and content digest (files), target (links); no link
    is followed."""
    found: Snapshot = {}
    for directory, dirs, files in os.walk(top, followlinks=False):
        for name in [*dirs, *files]:
            path = Path(directory, name)
            rel = str(path.relative_to(top))
            if path.is_symlink():
                found[rel] = ("link", os.readlink(path))
            elif path.is_dir():
                found[rel] = ("dir", "")
            elif path.is_file():
                found[rel] = ("file", hashlib.sha256(path.read_bytes()).hexdigest())
            else:
                found[rel] = ("other", "")
    return found


@dataclass
class Tally:
    count: int = 0
    resigned: int = 0  # mutants whose bundle.json was changed and signed again
    outcomes: collections.Counter[str] = field(default_factory=collections.Counter)
    failures: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def summary(self) -> dict[str, object]:
        return {
            "tars": self.count,
            "resigned": self.resigned,
            "installed": self.outcomes.get("installed", 0),
            "refused": sum(n for k, n in self.outcomes.items() if k.startswith("refused")),
            "tracebacks": sum(1 for f in self.failures if f.startswith("untyped")),
            "writes_outside_slot": sum(1 for f in self.failures if f.startswith("wrote")),
            "other_failures": sum(
                1 for f in self.failures if not f.startswith(("untyped", "wrote"))
            ),
            "by_kind": dict(self.outcomes.most_common()),
            "seconds": round(self.seconds, 1),
        }


class Bench:
    """A device root with 1.0.0 active, its neighbours, and the base tar (2.0.0) to mutate."""

    def __init__(self, home: Path, bundles: Bundles, runner: Path) -> None:
        self.home = home
        # Smoke runs in the C++ runner, as on a device: a child process per install.
        self.executor = CppExecutor(RunnerProcess.open(FoundRunner(runner, "the test"), 120.0))
        self.root = home / "device"
        self.canary = home / "canary"
        self.inbox = home / "inbox"
        self.keys = home / "keys"
        self.pristine = home / "pristine"
        self.canary.mkdir(parents=True)
        (self.canary / "keep.txt").write_text("untouched")
        self.inbox.mkdir()
        shutil.copytree(bundles.keys, self.keys)
        self.store = DeviceStore(self.root)
        install_bundle(
            self.store, bundles.v1, self.keys, FACTS, smoke_runs=1, executor=self.executor
        )
        shutil.copytree(self.root, self.pristine, symlinks=True)
        self.base: list[Member] = read_members(bundles.v2)
        self.top = self.base[0].info.name.split("/")[0]
        self.key = bundles.key
        self.tally = Tally()
        # Where `../` chains from the staging directory could land, besides the canary.
        staging = self.root / "staging" / "x"
        self.landing = [p / "canary" for p in staging.parents if p != self.home] + [
            Path("/etc/cron.d/evil"),
            Path(f"/{self.top}"),
        ]
        self.outside = {
            "canary": snapshot(self.canary),
            "keys": snapshot(self.keys),
            "pristine": snapshot(self.pristine),
        }

    def sign(self, document: bytes) -> bytes:
        signature: bytes = detached_signature(document, self.key)
        return signature

    def tar_bytes(self, rng: random.Random, recipe: Recipe) -> tuple[bytes, list[str]]:
        result: tuple[bytes, list[str]] = mutate(
            rng, self.base, recipe, canary=self.canary, top=self.top, sign=self.sign
        )
        return result

    def attempt(self, data: bytes, recipe: list[str]) -> str:
        """Install `data` and check every promise; the outcome's kind."""
        tar = self.inbox / "bundle.tar"
        tar.write_bytes(data)
        before = snapshot(self.root)
        state = self.store.load()
        active, inactive = state.active, state.inactive()
        assert active is not None
        started = time.monotonic()
        try:
            install_bundle(self.store, tar, self.keys, FACTS, smoke_runs=1, executor=self.executor)
            kind = "installed"
        except TrtEdgeError as exc:
            first = str(exc).splitlines()[0] if str(exc) else ""
            kind = f"refused: {reason(str(exc))} ({type(exc).__name__})"
            if not first or "Traceback" in str(exc):
                self.fail("empty or traceback message", recipe, str(exc))
        except Exception:
            kind = "untyped"
            self.fail("untyped exception", recipe, traceback.format_exc())
        self.tally.seconds += time.monotonic() - started
        self.tally.count += 1
        self.tally.resigned += any(step.startswith("re-signed") for step in recipe)
        self.tally.outcomes[kind] += 1
        self.check_writes(before, active, inactive, kind, recipe)
        if kind == "installed":  # back to the same start for the next tar
            shutil.rmtree(self.root)
            shutil.copytree(self.pristine, self.root, symlinks=True)
        return kind

    def fail(self, what: str, recipe: list[str], detail: str) -> None:
        prefix = "untyped" if what.startswith("untyped") else what
        self.tally.failures.append(f"{prefix}: {recipe}: {detail[-2000:]}")

    def check_writes(
        self, before: Snapshot, active: str, inactive: str, kind: str, recipe: list[str]
    ) -> None:
        after = snapshot(self.root)
        allowed = ("state.json", "current", "agent.lock", f"slots/{inactive}")
        changed = {
            rel
            for rel in set(before) | set(after)
            if before.get(rel) != after.get(rel)
            and not any(rel == a or rel.startswith(f"{a}/") for a in allowed)
        }
        if changed:
            self.fail("wrote outside the inactive slot", recipe, str(sorted(changed)))
        staged = list((self.root / "staging").iterdir())
        extra = {p.name for p in self.root.iterdir()} - ROOT_FILES
        if staged or extra:
            self.fail("wrote outside the inactive slot", recipe, f"{staged} {extra}")
        for name, seen in self.outside.items():
            if snapshot(self.home / name) != seen:
                self.fail(f"wrote outside the inactive slot ({name})", recipe, "")
        for spot in self.landing:
            if spot.exists() or spot.is_symlink():
                self.fail("wrote outside the inactive slot", recipe, str(spot))
        if set(os.listdir(self.home)) != {"device", "canary", "inbox", "keys", "pristine"}:
            self.fail("wrote outside the inactive slot", recipe, str(os.listdir(self.home)))
        state = self.store.load()
        slot = state.active
        if slot is None or (kind != "installed" and slot != active):
            self.fail("active model changed by a refused install", recipe, str(state))
            return
        try:
            _document, manifest = read_canonical_manifest(self.store.slot_dir(slot))
            verify_directory(self.store.slot_dir(slot), manifest)
        except TrtEdgeError as exc:
            self.fail("active model does not verify", recipe, str(exc))


@pytest.fixture(scope="module")
def bench(
    tmp_path_factory: pytest.TempPathFactory, agent_bundles: Bundles, trt_edge_run: Path
) -> Iterator[Bench]:
    bench = Bench(tmp_path_factory.mktemp("fuzz"), agent_bundles, trt_edge_run)
    yield bench
    report = os.environ.get("TRT_EDGE_FUZZ_REPORT")
    if report:
        doc = {**bench.tally.summary(), "failures": bench.tally.failures[:50]}
        Path(report).write_text(json.dumps(doc, indent=2))


def test_deterministic_corpus_of_mutated_tars(bench: Bench) -> None:
    for seed in range(FUZZ_TARS):
        rng = random.Random(seed)
        data, recipe = bench.tar_bytes(rng, draw_recipe(rng))
        bench.attempt(data, [f"seed {seed}", *recipe])
    summary = bench.tally.summary()
    print(json.dumps(summary))
    assert not bench.tally.failures, "\n".join(bench.tally.failures[:10])
    # The corpus reaches every stage: refusals of many kinds, and valid installs.
    assert summary["installed"], summary
    assert len(bench.tally.outcomes) >= 2, summary


@settings(
    max_examples=HYPOTHESIS_TARS,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)
@given(
    resigned=st.one_of(st.none(), st.sampled_from(RESIGNED)),
    structure=st.lists(st.sampled_from(STRUCTURE), max_size=3),
    raw=st.lists(st.sampled_from(BYTES), max_size=2),
    seed=st.integers(min_value=0, max_value=2**32 - 1),
)
def test_hypothesis_drawn_mutations(
    bench: Bench, resigned: object, structure: list[object], raw: list[object], seed: int
) -> None:
    recipe = Recipe(resigned, tuple(structure), tuple(raw))  # type: ignore[arg-type]
    data, steps = bench.tar_bytes(random.Random(seed), recipe)
    failures = len(bench.tally.failures)
    bench.attempt(data, [f"hypothesis seed {seed}", *steps])
    assert len(bench.tally.failures) == failures, bench.tally.failures[-1]


def test_the_active_model_still_runs_after_the_fuzz(bench: Bench) -> None:
    assert run_model(bench.root / "current") == "1.0.0"


def test_a_sample_through_the_real_cli_exits_0_or_1_without_traceback(
    bench: Bench, tmp_path: Path
) -> None:
    root = tmp_path / "cli-device"
    shutil.copytree(bench.pristine, root, symlinks=True)
    env = {
        **os.environ,
        "TRT_EDGE_ROOT": str(root),
        "TRT_EDGE_KEYS": str(bench.keys),
        "TRT_EDGE_FACTS": str(tmp_path / "facts.json"),
        "TRT_EDGE_CONFIG": str(tmp_path / "device.json"),
        "TRT_EDGE_RUNNER": str(bench.executor.runner.found.path),
    }
    (tmp_path / "facts.json").write_text(json.dumps(FACTS))
    codes = collections.Counter[int]()
    for seed in range(CLI_SAMPLE):
        rng = random.Random(10_000_000 + seed)
        data, recipe = bench.tar_bytes(rng, draw_recipe(rng))
        tar = tmp_path / "bundle.tar"
        tar.write_bytes(data)
        done = subprocess.run(
            [sys.executable, "-m", "trt_edge_runner.device_cli", "install", str(tar), "--json"],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode in (0, 1), (recipe, done.stderr)
        assert "Traceback" not in done.stderr, (recipe, done.stderr)
        if done.returncode == 1:
            assert done.stderr.startswith("trt-edge-device install: error: "), done.stderr
            assert json.loads(done.stdout)["ok"] is False
        codes[done.returncode] += 1
    assert codes[1] > 0
