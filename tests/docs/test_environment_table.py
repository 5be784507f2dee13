"""docs/environment.md lists every `TRT_EDGE_*` name the code uses, and no other.

"The code" is every file git tracks except Markdown (the docs describe names, they do not use
them); the names are found the way `git grep -o "TRT_EDGE_[A-Z0-9_]*"` finds them. A name that
ends in `_` is a prefix in a sentence ("`TRT_EDGE_*` variables"), not a name.
"""

from __future__ import annotations

import re
import subprocess

from tests.helpers.paths import REPO

PAGE = REPO / "docs" / "environment.md"
NAME = re.compile(r"TRT_EDGE_[A-Z0-9_]*")


def names_in_code() -> set[str]:
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True
    ).stdout.decode()
    found: set[str] = set()
    for name in filter(None, listed.split("\0")):
        path = REPO / name
        if name.endswith(".md") or not path.is_file():
            continue
        found |= set(NAME.findall(path.read_text(encoding="utf-8", errors="replace")))
    return {n for n in found if not n.endswith("_")}


def names_in_table() -> set[str]:
    rows = PAGE.read_text(encoding="utf-8").splitlines()
    return {m.group(1) for row in rows if (m := re.match(r"^\| `(TRT_EDGE_[A-Z0-9_]+)` \|", row))}


def test_the_table_lists_every_name_the_code_uses_and_no_other() -> None:
    code, table = names_in_code(), names_in_table()
    assert code, "no TRT_EDGE_* name found in the code: the search is broken"
    missing, stale = sorted(code - table), sorted(table - code)
    assert not missing, f"add a row to docs/environment.md for: {missing}"
    assert not stale, f"docs/environment.md lists names no code uses: {stale}"


def test_every_name_has_one_row() -> None:
    rows = re.findall(r"^\| `(TRT_EDGE_[A-Z0-9_]+)` \|", PAGE.read_text(encoding="utf-8"), re.M)
    assert len(rows) == len(set(rows)), sorted(n for n in rows if rows.count(n) > 1)
