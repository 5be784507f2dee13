"""The README is a five-minute read whose links resolve; the docs site builds strictly; the design
is cited where it lives.

The site's own links, anchors and nav are checked by MkDocs itself (`strict` and the
`validation` options in mkdocs.yml); the last test here shows that a page left out of the nav
really fails the build.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from markdown.extensions.toc import slugify

from tests.docs.doc_blocks import README
from tests.helpers.paths import REPO

README_MAX_LINES = 300
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
# The design's file name, spelled so that this file does not cite it.
DESIGN_NAME = "DESIGN" + ".md"


def anchors(page: Path) -> set[str]:
    """The heading ids MkDocs gives a page (its default slugify)."""
    text = re.sub(r"^```.*?^```", "", page.read_text(encoding="utf-8"), flags=re.M | re.S)
    headings = re.findall(r"^#{1,6}\s+(.+?)\s*$", text, re.M)
    return {slugify(re.sub(r"[`*]", "", h), "-") for h in headings}


def test_the_readme_is_a_five_minute_read() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines"


def test_every_readme_link_resolves_to_a_file_and_anchor() -> None:
    links = LINK.findall(README.read_text(encoding="utf-8"))
    assert any(link.startswith("docs/") for link in links)
    for link in links:
        if re.match(r"\w+://", link):
            continue
        target, _, anchor = link.partition("#")
        path = (REPO / target).resolve()
        assert path.exists(), f"README.md links to {link}: no such file"
        if anchor:
            assert anchor in anchors(path), f"README.md links to {link}: no such heading"


def test_the_design_is_cited_by_its_place_in_the_repository() -> None:
    listed = subprocess.run(
        ["git", "grep", "-n", "-i", "-I", "-E", r"[A-Za-z0-9_./-]*design\.md"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    ).stdout.splitlines()
    assert listed, "nothing cites docs/design.md"
    wrong = []
    for hit in listed:
        name, _, text = hit.split(":", 2)
        for cited in re.findall(r"[A-Za-z0-9_./-]*design\.md", text, re.I):
            places = (REPO / cited, (REPO / name).parent / cited, REPO / "docs" / cited)
            if DESIGN_NAME in cited or not any(p.exists() for p in places):
                wrong.append(f"{name}: {cited}")
    assert not wrong, "cite docs/design.md:\n" + "\n".join(wrong)


def mkdocs(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(site)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={"NO_MKDOCS_2_WARNING": "1", "PATH": "/usr/bin:/bin"},
    )


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    done = mkdocs(REPO / "mkdocs.yml", tmp_path / "site")
    assert done.returncode == 0, done.stderr[-3000:]
    assert (tmp_path / "site" / "design" / "index.html").is_file()


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ("orphan", 'not included in the "nav"'),
        ("broken link", "not found among documentation files"),
        ("broken anchor", "does not contain an anchor"),
    ],
)
def test_a_page_outside_the_nav_or_a_broken_link_fails_the_build(
    tmp_path: Path, change: str, said: str
) -> None:
    shutil.copy(REPO / "mkdocs.yml", tmp_path / "mkdocs.yml")
    docs = shutil.copytree(REPO / "docs", tmp_path / "docs")
    if change == "orphan":
        (docs / "orphan.md").write_text("# Not in the nav\n", encoding="utf-8")
    else:
        link = "[x](nowhere.md)" if change == "broken link" else "[x](design.md#nowhere)"
        with (docs / "index.md").open("a", encoding="utf-8") as page:
            page.write(f"\n{link}\n")
    done = mkdocs(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert done.returncode != 0
    assert said in done.stderr, done.stderr[-2000:]
