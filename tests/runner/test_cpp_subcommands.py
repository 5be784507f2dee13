"""trt-edge-run's subcommands (run, phases, load, generate, serve, version): each takes only its
own flags, refuses another's by naming both (as the runner-error document with --json), has its
own --help, and prints what the older flag-only form (`--phases all`, `--load`, ...) prints:
that form stays an alias, for the agents already on devices."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from trt_edge_runner.runner_interface import EXIT_USAGE
from trt_edge_runner.schemas import check

pytestmark = pytest.mark.slow

SUBCOMMANDS = ("run", "phases", "load", "generate", "serve", "version")
# Fields that differ from one process to the next (timings, memory), left out of comparisons.
VARYING = {"latency_ms", "first_ms", "median_ms", "min_ms", "max_ms", "runs_ms", "peak_rss_bytes"}


def run(binary: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(binary), *args], capture_output=True, text=True, check=False, timeout=300
    )


def steady(value: Any) -> Any:
    """`value` without the fields that vary between runs."""
    if isinstance(value, dict):
        return {k: steady(v) for k, v in value.items() if k not in VARYING}
    if isinstance(value, list):
        return [steady(v) for v in value]
    return value


def document(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert done.returncode == 0, done.stderr
    doc: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return doc


@pytest.mark.parametrize(
    ("subcommand", "flag_form"),
    [
        (["load"], ["--load"]),
        (["phases", "--seed", "3"], ["--phases", "all", "--seed", "3"]),
        (["phases", "--only", "decode", "--runs", "1"], ["--phases", "decode", "--runs", "1"]),
        (["run", "--phase", "decode", "--seed", "2"], ["--phase", "decode", "--seed", "2"]),
        (["run", "--auto", "--dims", "seq=40"], ["--auto", "--dims", "seq=40"]),
        (["version"], ["--version"]),
    ],
)
def test_a_subcommand_prints_what_its_flag_form_prints(
    trt_edge_run: Path, llm_like_bundle: Path, subcommand: list[str], flag_form: list[str]
) -> None:
    bundle = [] if subcommand == ["version"] else ["--bundle", str(llm_like_bundle)]
    new = document(run(trt_edge_run, subcommand[0], *bundle, *subcommand[1:], "--json"))
    old = document(run(trt_edge_run, *bundle, *flag_form, "--json"))
    assert steady(new) == steady(old)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run", "--auto", "--runs", "2"], "run: --runs is not a flag of run; it goes with phases"),
        (["phases", "--dims", "seq=4"], "phases: --dims is not a flag of phases; it goes with run"),
        (["load", "--prompt-ids", "1"], "load: --prompt-ids is not a flag of load; it goes with"),
        (["run", "--auto", "--frobnicate"], "run: unknown flag --frobnicate"),
        (["run", "--phase", "decode", "--auto"], "run: pass exactly one of --phase P"),
        (["run", "--auto", "--bench", "0"], "run: --bench 0: must be between 1 and"),
        (["generate"], "generate: --prompt-ids 1,2,3 is required"),
        (["phases", "--only", "a,,b"], "phases: --only a,,b: expected all, or phase names P,Q"),
        (["frobnicate"], "unknown subcommand 'frobnicate': pass one of run, phases, load"),
    ],
)
def test_a_bad_flag_is_a_usage_document_naming_the_subcommand_and_the_flag(
    trt_edge_run: Path, llm_like_bundle: Path, args: list[str], message: str
) -> None:
    done = run(trt_edge_run, *args, "--bundle", str(llm_like_bundle), "--json")
    assert done.returncode == EXIT_USAGE, done.stderr
    doc = json.loads(done.stdout)
    assert check("runner-error", doc) is None
    assert doc["error"]["kind"] == "usage" and message in doc["error"]["message"]
    assert f"trt-edge-run: error: {doc['error']['message']}" in done.stderr


def test_a_misplaced_flag_says_where_to_look(trt_edge_run: Path) -> None:
    done = run(trt_edge_run, "run", "--bundle", "B", "--auto", "--max-request-bytes", "2048")
    assert done.returncode == EXIT_USAGE
    assert "it goes with serve; see trt-edge-run run --help" in done.stderr
    assert "trt-edge-run SUBCOMMAND --help" in done.stderr  # the synopsis, at a terminal


@pytest.mark.parametrize("name", SUBCOMMANDS)
def test_each_subcommand_has_its_own_help(trt_edge_run: Path, name: str) -> None:
    done = run(trt_edge_run, name, "--help")
    assert done.returncode == 0 and done.stdout.startswith(f"usage: trt-edge-run {name} ")
    assert run(trt_edge_run, "help", name).stdout == done.stdout
    flags = done.stdout.split("Flags:\n")[1].split("\n\n")[0]
    assert ("--runs N" in flags) == (name == "phases")
    assert ("--prompt-ids" in flags) == (name == "generate")
    assert ("--json" in flags) == (name != "serve")


def test_the_runner_help_lists_every_subcommand_and_the_flag_form(trt_edge_run: Path) -> None:
    done = run(trt_edge_run, "--help")
    assert done.returncode == 0
    for name in SUBCOMMANDS:
        assert f"trt-edge-run {name} " in done.stdout
    for flag in ("--phase P", "--phases all|P,Q", "--load", "--generate", "--serve", "--version"):
        assert flag in done.stdout.split("flag-only form")[1]


def test_the_flag_form_with_two_modes_is_refused(trt_edge_run: Path) -> None:
    done = run(trt_edge_run, "--bundle", "B", "--load", "--generate", "--json")
    assert done.returncode == EXIT_USAGE
    assert "exactly one of --phase" in json.loads(done.stdout)["error"]["message"]
