"""The fuzz of trt-edge-run's program loader, small: every outcome typed or contained.

`tests/fuzz/fuzz_runner_programs.py` runs the same cases by the ten thousand (the
figure is in the report); here 400 cases of seed 0 on a tiny real bundle (~5 s),
and the script's resume and replay on a few.
"""

from __future__ import annotations

import collections
import json
import subprocess
import sys
from pathlib import Path

import pytest
from trt_edge_runner.runner_interface import EXIT_KINDS

from tests.fuzz.program_mutations import KINDS, mutation, run_case, write_case

pytestmark = pytest.mark.slow

SCRIPT = Path(__file__).resolve().parents[1] / "fuzz" / "fuzz_runner_programs.py"


def test_mutated_programs_end_in_a_typed_refusal_or_a_contained_crash(
    trt_edge_run: Path, llm_like_bundle: Path, tmp_path: Path
) -> None:
    pte = (llm_like_bundle / "model.pte").read_bytes()
    document = (llm_like_bundle / "bundle.json").read_bytes()
    outcomes: collections.Counter[str] = collections.Counter()
    kinds: collections.Counter[str] = collections.Counter()
    for index in range(400):
        case = mutation(0, index, pte, document)
        kinds[case.kind] += 1
        bundle = write_case(llm_like_bundle, case, tmp_path / "case")
        outcome = run_case([str(trt_edge_run)], bundle, EXIT_KINDS, timeout=60)
        assert outcome.kind.startswith(("ok", "refused:", "crash:")), (index, case.detail, outcome)
        outcomes[outcome.kind] += 1
    assert set(kinds) == set(KINDS)  # every kind of mutation was tried
    # The loader is what is tested: most mutated programs reach it and are refused there.
    assert outcomes["refused:program_load"] > 100, outcomes
    assert outcomes["ok"] > 0 and outcomes["refused:bundle_format"] > 0, outcomes


def test_mutations_are_the_same_bytes_every_time(llm_like_bundle: Path) -> None:
    pte = (llm_like_bundle / "model.pte").read_bytes()
    document = (llm_like_bundle / "bundle.json").read_bytes()
    for index in (0, 7, 123):
        assert mutation(0, index, pte, document) == mutation(0, index, pte, document)
    assert mutation(0, 5, pte, document) != mutation(1, 5, pte, document)


def test_the_script_resumes_and_replays(
    trt_edge_run: Path, llm_like_bundle: Path, tmp_path: Path
) -> None:
    results = tmp_path / "results.jsonl"

    def fuzz(*extra: str) -> subprocess.CompletedProcess[str]:
        argv = [sys.executable, str(SCRIPT), "--runner", str(trt_edge_run)]
        argv += ["--bundle", str(llm_like_bundle), "--results", str(results), *extra]
        return subprocess.run(argv, capture_output=True, text=True, check=False, timeout=600)

    first = fuzz("-n", "30")
    assert first.returncode == 0, first.stdout + first.stderr
    assert "30 cases (30 run now" in first.stdout
    second = fuzz("-n", "50")
    assert second.returncode == 0, second.stdout + second.stderr
    assert "50 cases (20 run now" in second.stdout  # the first 30 were not run again
    assert "neither a typed refusal nor a contained crash: 0" in second.stdout
    rows = [json.loads(line) for line in results.read_text().splitlines()[1:]]
    assert sorted(r["index"] for r in rows) == list(range(50))
    other = fuzz("-n", "5", "--seed", "9")
    assert other.returncode != 0 and "holds results of another run" in other.stderr
    replay = fuzz("--replay", "3", "--keep", str(tmp_path / "case-3"))
    assert replay.returncode == 0 and "case 3:" in replay.stdout
    assert (tmp_path / "case-3" / "model.pte").is_file()
