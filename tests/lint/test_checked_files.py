"""ruff (`make lint`) and mypy (`make typecheck`) check every Python file of the checkout.

Both tools pick their files from configuration (ruff: the checkout minus
`extend-exclude`; mypy: `files` in pyproject.toml), and a file outside those roots is
silently skipped — as `sdk/trt_edge/build/` once was. So the set each tool
checks is compared with the set git tracks (plus untracked files git does not ignore,
so a new file fails before it is committed): a new top-level folder, a package named
like an output directory or an exclude that is too wide fails here, naming the files.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.helpers.paths import REPO


def run(args: list[str], root: Path) -> str:
    done = subprocess.run(args, cwd=root, capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"{' '.join(args)} in {root}: {done.stderr}"
    return done.stdout


def git_python_files(root: Path) -> set[str]:
    listed = run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "*.py"], root)
    # A file deleted in the working tree but not yet in the index is listed by --cached.
    return {path for path in listed.splitlines() if (root / path).is_file()}


def ruff_python_files(root: Path) -> set[str]:
    """What `ruff check .` (make lint) reads, relative to `root`."""
    ruff = Path(sys.executable).with_name("ruff")
    listed = run([str(ruff), "check", "--show-files", "."], root).splitlines()
    return {Path(line).relative_to(root).as_posix() for line in listed if line.endswith(".py")}


def mypy_python_files(root: Path, monkeypatch: pytest.MonkeyPatch) -> set[str]:
    """What `mypy` (make typecheck) checks: its own source finder over the configured files."""
    from mypy.main import process_options

    monkeypatch.chdir(root)  # mypy reads pyproject.toml from, and resolves `files` against, here
    sources, _ = process_options([])
    return {Path(s.path).as_posix() for s in sources if s.path is not None}


def difference(tracked: set[str], checked: set[str], tool: str) -> str:
    missed = sorted(tracked - checked)
    extra = sorted(checked - tracked)
    return (
        f"{tool} checks {len(checked)} files, git has {len(tracked)}.\n"
        f"not checked by {tool} ({len(missed)}): {missed}\n"
        f"checked but not in git ({len(extra)}): {extra}\n"
        "Put the file under a configured root or extend the roots in pyproject.toml."
    )


def test_ruff_checks_every_python_file_git_has() -> None:
    tracked, checked = git_python_files(REPO), ruff_python_files(REPO)
    assert checked == tracked, difference(tracked, checked, "ruff")


def test_mypy_checks_every_python_file_git_has(monkeypatch: pytest.MonkeyPatch) -> None:
    tracked, checked = git_python_files(REPO), mypy_python_files(REPO, monkeypatch)
    assert checked == tracked, difference(tracked, checked, "mypy")


def test_a_file_either_tool_would_skip_is_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A check that cannot fail proves nothing. In a scratch checkout with this project's
    pyproject.toml and one file under each configured mypy root, a new top-level folder
    escapes mypy and a package named `dist` (an output folder to ruff) escapes ruff."""
    shutil.copyfile(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    for folder in config["tool"]["mypy"]["files"]:
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "present.py").write_text("VALUE = 1\n")
    for rel in ("scripts/new_tool.py", "sdk/trt_edge/dist/stage.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("VALUE = 2\n")
    run(["git", "init", "-q"], tmp_path)
    tracked = git_python_files(tmp_path)
    assert tracked - mypy_python_files(tmp_path, monkeypatch) == {"scripts/new_tool.py"}
    assert tracked - ruff_python_files(tmp_path) == {"sdk/trt_edge/dist/stage.py"}
