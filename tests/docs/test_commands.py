"""Every command in the README and the docs pages runs as written.

Each ```sh block is checked command by command against the real tools, without running the slow
ones: `trt-edge` and `trt-edge-device` arguments go through the programs' own argument parsers,
`make` targets must exist in the Makefile, and every checkout path a command names must exist.
The quick commands that need neither torch nor Docker (`trt-edge validate`, `trt-edge profiles`,
the conformance runners) then run for real. A block marked `<!-- needs: … -->` is checked the
same way, then skipped with that reason; a block a dedicated test runs end to end is checked
here and run there. The convention is in docs/contributing.md.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import re
import subprocess
import sys
from pathlib import Path

import pytest
from trt_edge_runner.cli_shell import Shell

from tests.docs.doc_blocks import NEEDS, Block, all_blocks
from tests.helpers.paths import CPP_SRC, REPO

BLOCKS = all_blocks()

# Top-level folders of the checkout: a command argument under one of them must exist.
CHECKOUT_DIRS = ("examples", "tests", "benchmarks", "manifests", "images", "sdk", "device_runner")
# Path components that are build outputs, made by an earlier command or `make test-cpp`.
OUTPUTS = {"dist", "build", "site"}
# Programs a command may start; anything else is a new tool this test must learn first.
OTHER_PROGRAMS = {"ansible", "cat", ".", "mosquitto"}
RUNNER = CPP_SRC / "build" / "runner" / "trt-edge-run"
CPP_CONFORMANCE = CPP_SRC / "build" / "trt_edge_conformance"
QUICK = {("trt-edge", "validate"), ("trt-edge", "profiles")}


def shell(program: str) -> Shell:
    """The argument shell of `trt-edge` or `trt-edge-device`."""
    if program == "trt-edge":
        from trt_edge.cli.main import SHELL
    else:
        from trt_edge_runner.device_cli import SHELL
    return SHELL


def parse_error(program: str, argv: list[str]) -> str | None:
    """What the program's own parser says about `argv`, or None when it parses."""
    tool = shell(program)
    stderr = io.StringIO()
    try:
        with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
            tool.build_parser(only=tool.chosen_command(argv)).parse_args(argv)
    except SystemExit as done:
        if done.code not in (0, None):
            return stderr.getvalue().strip() or f"exit {done.code}"
    return None


def make_targets() -> set[str]:
    text = (REPO / "Makefile").read_text(encoding="utf-8")
    return set(re.findall(r"^([A-Za-z0-9_.-]+):(?!=)", text, re.MULTILINE))


def checkout_path(cwd: Path, arg: str) -> Path | None:
    """`arg` as a path inside the checkout that must exist, or None if it is not one."""
    if arg.startswith("-") or any(c in arg for c in "*?[=<>|$ "):
        return None
    if "/" not in arg and not re.search(r"\.[A-Za-z]\w*$", arg):
        return None  # a word or a number, not a file name
    path = (cwd / arg).resolve()
    try:
        relative = path.relative_to(REPO)
    except ValueError:
        return None
    parts = relative.parts
    if not parts or parts[0] not in CHECKOUT_DIRS or OUTPUTS & set(parts):
        return None
    return path


def problems_of(block: Block) -> tuple[list[str], list[tuple[Path, list[str]]]]:
    """What is wrong with the block's commands, and the quick ones to run (cwd, argv)."""
    problems: list[str] = []
    quick: list[tuple[Path, list[str]]] = []
    cwd = REPO
    targets = make_targets()
    for argv in block.commands():
        if argv[0] == "sudo":
            argv = argv[1:]
        program, args = argv[0], argv[1:]
        said = " ".join(argv)
        for arg in args:
            path = checkout_path(cwd, arg)
            if path is not None and not path.exists():
                problems.append(f"{said}: {arg} does not exist in the checkout")
        if program == "cd":
            cwd = (cwd / args[0]).resolve()
            if not cwd.is_dir():
                problems.append(f"{said}: no such folder")
        elif program in ("trt-edge", "trt-edge-device"):
            error = parse_error(program, args)
            if error:
                problems.append(f"{said}: {error}")
            elif (program, args[0] if args else "") in QUICK:
                quick.append((cwd, argv))
        elif program == "make":
            problems += [
                f"{said}: no target {t!r} in the Makefile" for t in args if t not in targets
            ]
        elif program == "python":
            if args[:1] == ["-m"]:
                if importlib.util.find_spec(args[1]) is None:
                    problems.append(f"{said}: no module {args[1]}")
                elif args[1] == "trt_edge_runner.conformance":
                    quick.append((cwd, argv))
            elif not (cwd / args[0]).is_file():
                problems.append(f"{said}: no script {args[0]}")
        elif program.endswith("/trt-edge-run") or program == "trt-edge-run":
            if RUNNER.is_file():
                usage = subprocess.run(
                    [RUNNER, "--help"], capture_output=True, text=True, check=False
                ).stdout
                flags = [a.split("=")[0] for a in args if a.startswith("--")]
                problems += [f"{said}: trt-edge-run has no {f}" for f in flags if f not in usage]
        elif program.endswith("/trt_edge_conformance"):
            if CPP_CONFORMANCE.is_file():
                quick.append((cwd, argv))
        elif program not in OTHER_PROGRAMS:
            problems.append(f"{said}: {program!r} is a program this test does not know")
    return problems, quick


def run_quick(cwd: Path, argv: list[str]) -> subprocess.CompletedProcess[str]:
    if argv[0] == "python":
        command = [sys.executable, *argv[1:]]
    elif argv[0] == "trt-edge":
        command = [sys.executable, "-m", "trt_edge", *argv[1:]]
    else:
        command = [str(CPP_CONFORMANCE), *argv[1:]]
    return subprocess.run(
        command, cwd=cwd, capture_output=True, text=True, timeout=300, check=False
    )


@pytest.mark.parametrize("block", BLOCKS, ids=[b.where for b in BLOCKS])
def test_every_documented_command_runs_as_written(block: Block) -> None:
    unknown = set(block.needs) - NEEDS
    assert not unknown, f"{block.where}: unknown needs {sorted(unknown)}; known: {sorted(NEEDS)}"
    problems, quick = problems_of(block)
    assert not problems, f"{block.where}:\n" + "\n".join(problems)
    if block.needs:
        pytest.skip(f"{block.where} needs {', '.join(block.needs)}")
    if block.run_elsewhere:
        pytest.skip(f"{block.where} runs end to end in {block.run_elsewhere}")
    for cwd, argv in quick:
        done = run_quick(cwd, argv)
        assert done.returncode == 0, (block.where, argv, done.stdout[-1500:], done.stderr[-1500:])


def test_the_docs_hold_shell_blocks_of_every_kind() -> None:
    """The check above sees the README's quickstart, skipped blocks and end-to-end blocks."""
    pages = {b.page.name for b in BLOCKS}
    assert {"README.md", "building.md", "fleet.md", "containers.md"} <= pages
    assert any(b.needs for b in BLOCKS)
    assert {b.run_elsewhere for b in BLOCKS} >= set(
        ["tests/llm/test_readme_commands.py", "tests/fleet/test_readme_rollout.py"]
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("trt-edge validate examples/tiny_llm/manifest.yaml --jsn", "unrecognized arguments"),
        ("trt-edge bild examples/tiny_llm/manifest.yaml", "invalid choice"),
        ("trt-edge validate examples/nowhere/manifest.yaml", "does not exist"),
        ("make no-such-target", "no target"),
        ("python benchmarks/bench_nothing.py", "no script"),
        ("curl https://example.org", "does not know"),
    ],
)
def test_a_broken_command_is_reported(text: str, expected: str) -> None:
    problems, _ = problems_of(Block(REPO / "README.md", 1, (), text))
    assert any(expected in p for p in problems), problems
