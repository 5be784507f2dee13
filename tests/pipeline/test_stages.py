"""One story of the stage order: `STAGES` is what docs/building.md, the README's CLI table, the
package docstring and the CLI say (`build()` following it is pinned in test_run and test_cli,
which run real builds)."""

from __future__ import annotations

import io
import re
from pathlib import Path

import trt_edge.pipeline
from trt_edge.pipeline.stages import STAGE_NAMES, STAGES, flow

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
BUILDING = REPO / "docs" / "building.md"


def _section(text: str, heading: str) -> str:
    start = text.index(f"\n## {heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def test_the_building_page_lists_the_stages_in_order_with_their_summaries() -> None:
    building = _section(BUILDING.read_text(encoding="utf-8"), "The stages")
    items = re.findall(r"^(\d+)\. `(\w+)` — (.+)$", building, re.MULTILINE)
    assert [name for _, name, _ in items] == list(STAGE_NAMES)
    assert [int(n) for n, _, _ in items] == list(range(1, len(STAGES) + 1))
    for (_, _, text), stage in zip(items, STAGES, strict=True):
        assert text.startswith(stage.summary), (stage.name, text)


def test_the_readme_cli_table_and_the_package_docstring_tell_the_same_order() -> None:
    readme = README.read_text(encoding="utf-8")
    [row] = [line for line in readme.splitlines() if line.startswith("| `trt-edge build M")]
    assert flow() in row
    doc = trt_edge.pipeline.__doc__ or ""
    [line] = [ln for ln in doc.splitlines() if ln.startswith(f"{STAGE_NAMES[0]} →")]
    assert re.sub(r" \([^)]*\)", "", line).rstrip(".") == flow()


def test_stage_names_are_unique_and_summaries_fit_one_line() -> None:
    assert len(set(STAGE_NAMES)) == len(STAGES)
    assert all(stage.summary and "\n" not in stage.summary for stage in STAGES)


def test_the_progress_display_draws_one_line_per_stage_in_order() -> None:
    from rich.console import Console
    from trt_edge.cli._build import RichProgress

    console = Console(file=io.StringIO(), width=120)
    with RichProgress(console) as progress:
        for name in STAGE_NAMES:
            if name != "export":  # lower came from the cache: export is not needed
                progress.stage_started(name)
                progress.stage_finished(name, 0.1, cached=name == "lower")
    lines = console.file.getvalue().splitlines()  # type: ignore[attr-defined]
    assert [line.split()[1] for line in lines] == list(STAGE_NAMES)
    assert all(line.startswith("✓ ") for line in lines)
    states = {line.split()[1]: line.split()[2] for line in lines}
    assert states == {**dict.fromkeys(STAGE_NAMES, "done"), "export": "not", "lower": "cached"}
