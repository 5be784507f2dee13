"""The shell blocks of the README and the docs pages, and the commands in them.

A block is a fenced ```` ```sh ```` block; the HTML comments on the lines right above its fence
are its markers (`<!-- needs: docker -->`, `<!-- commands: huggingface … -->`). A command is one
logical line of a block: continuation lines (`\\`) joined, comments dropped, heredoc bodies
skipped. Output, JSON and YAML live in other block kinds and are not read. The convention is
described in docs/contributing.md ("Commands in the docs").
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path

from tests.helpers.paths import REPO

DOCS = REPO / "docs"
README = REPO / "README.md"

# Why a block may be skipped: what it needs that a development machine does not have.
NEEDS = frozenset({"docker", "device", "gpu", "root"})

# Markers of blocks that a dedicated test runs end to end (those tests say how).
RUN_ELSEWHERE = {
    "commands: huggingface": "tests/llm/test_readme_commands.py",
    "readme-test: rollout": "tests/fleet/test_readme_rollout.py",
}

_FENCE = re.compile(r"^```(\S*)\s*$")
_MARKER = re.compile(r"^<!--\s*(.*?)\s*-->$")
_HEREDOC = re.compile(r"<<-?\s*['\"]?(\w+)['\"]?")


@dataclass(frozen=True)
class Block:
    """One ```sh block: where it is, the markers above it, its text."""

    page: Path
    line: int  # 1-based line of the opening fence
    markers: tuple[str, ...]
    text: str

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(REPO)}:{self.line}"

    @property
    def needs(self) -> tuple[str, ...]:
        """What the block needs (`<!-- needs: root, docker -->` → ("root", "docker"))."""
        found: list[str] = []
        for marker in self.markers:
            if marker.startswith("needs:"):
                found += [n.strip() for n in marker.removeprefix("needs:").split(",")]
        return tuple(found)

    @property
    def run_elsewhere(self) -> str | None:
        """The test that runs this block end to end, if a marker names one."""
        for marker in self.markers:
            for prefix, test in RUN_ELSEWHERE.items():
                if marker.startswith(prefix):
                    return test
        return None

    def commands(self) -> list[list[str]]:
        """Each logical line as argv (comments dropped, heredoc bodies skipped)."""
        logical: list[str] = []
        pending = ""
        heredoc_end: str | None = None
        for raw in self.text.splitlines():
            if heredoc_end is not None:
                if raw.strip() == heredoc_end:
                    heredoc_end = None
                continue
            if raw.rstrip().endswith("\\"):
                pending += raw.rstrip()[:-1] + " "
                continue
            line = pending + raw
            pending = ""
            match = _HEREDOC.search(line)
            if match:
                heredoc_end = match.group(1)
            logical.append(line)
        return [argv for argv in (shlex.split(line, comments=True) for line in logical) if argv]


def pages() -> list[Path]:
    """The README and every docs page."""
    return [README, *sorted(DOCS.glob("*.md"))]


def blocks(page: Path) -> list[Block]:
    """Every ```sh block of a page, in order."""
    lines = page.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    i = 0
    while i < len(lines):
        fence = _FENCE.match(lines[i])
        if not fence:
            i += 1
            continue
        start = i
        i += 1
        while i < len(lines) and not lines[i].startswith("```"):
            i += 1
        if fence.group(1) == "sh":
            markers: list[str] = []
            j = start - 1
            while j >= 0 and (marker := _MARKER.match(lines[j].strip())):
                markers.insert(0, marker.group(1))
                j -= 1
            found.append(Block(page, start + 1, tuple(markers), "\n".join(lines[start + 1 : i])))
        i += 1
    return found


def all_blocks() -> list[Block]:
    return [block for page in pages() for block in blocks(page)]


def marked_block(page: Path, marker: str) -> Block:
    """The one ```sh block of `page` under a `<!-- MARKER… -->` comment (a test that runs a
    page's block end to end finds it so, and fails when the page lost or doubled it)."""
    found = [b for b in blocks(page) if any(m.startswith(marker) for m in b.markers)]
    where = page.relative_to(REPO)
    assert len(found) == 1, f"{where} must hold one ```sh block under <!-- {marker} -->"
    return found[0]


def clean_env(*bin_dirs: Path, **extra: str) -> dict[str, str]:
    """A reader's clean shell: `PATH` (`bin_dirs`, then the system's), `HOME`, `extra`, and
    `PYTHONPATH` when this session has one (worktrees sharing one venv point it at their
    own code). No `TRT_EDGE_*` variable and no activated venv leak in from the session."""
    path = ":".join([*map(str, bin_dirs), "/usr/local/bin", "/usr/bin", "/bin"])
    env = {"PATH": path, "HOME": os.environ.get("HOME", "/root"), **extra}
    if os.environ.get("PYTHONPATH"):
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return env


def run_as_written(
    argv: list[str], cwd: Path, env: dict[str, str], timeout: float
) -> subprocess.CompletedProcess[str]:
    """A documented command (or `bash -euo pipefail -c SCRIPT`) as a reader runs it: in `cwd`
    with `env`, its output captured as text; the caller judges the exit code."""
    return subprocess.run(
        argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


def bash(script: str) -> list[str]:
    """`script` run line for line, stopping at the first failure (as the docs promise)."""
    return ["bash", "-euo", "pipefail", "-c", script]
