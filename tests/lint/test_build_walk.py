"""The walk of `build()`'s manifest path stays short (issue 30: ≤ 30 stops, ≤ 10 returns).

`benchmarks/walk_build.py` traces a real build and follows the manifest's path, its source
and the resolved manifest through the calls (its docstring defines a stop and a return;
docs/design.md, "The build reads as a chain"). The whole build's walk needs torch.export
and a lowering (tens of seconds): tests/pipeline/test_build_walk.py holds its bounds. The
walk up to the export stage — the manifest read, checked, resolved, and every decision of
load and plan — costs a second and holds a ceiling of its own, which only goes down.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

from tests.helpers.paths import REPO
from tests.helpers.scripts import load_benchmark

# Up to export, today: 17 stops, 4 returns (lower these when the walk gets shorter).
STOPS_BEFORE_EXPORT, RETURNS_BEFORE_EXPORT = 17, 4
MANIFEST = REPO / "examples" / "vision" / "manifest.yaml"


@pytest.fixture(scope="module")
def tool() -> ModuleType:
    return load_benchmark("walk_build")


def test_returns_count_each_coming_back_to_a_file_left_earlier(tool: ModuleType) -> None:
    walk = tool.Walk(["a:f", "a:g", "b:f", "a:h", "c:f", "b:g", "b:h", "a:f"])
    assert walk.returns == 3  # a (after b), b (after c), a (after b)
    assert walk.files == ["a", "b", "c"]
    assert walk.summary() == "8 stops, 3 returns, 3 files"


def test_a_stop_is_a_call_that_receives_the_path_its_text_or_the_manifest(
    tool: ModuleType, tmp_path: Path
) -> None:
    """Each kind of thread value makes a stop; a value merely holding the path does not."""
    from trt_edge.manifest import load_manifest
    from trt_edge.manifest.source import read_source

    source = read_source(MANIFEST)
    assert source.text is not None
    thread = tool.Thread.of(MANIFEST)
    assert thread.holds(MANIFEST) and thread.holds(str(MANIFEST.resolve()))
    assert thread.holds(source.raw) and thread.holds(source.text)
    assert not thread.holds(source) and not thread.holds(MANIFEST.parent)
    manifest = load_manifest(MANIFEST).manifest
    assert thread.holds(manifest)

    walk = tool.walk(MANIFEST, lambda: load_manifest(MANIFEST))
    assert walk.stops[:2] == [
        "sdk/trt_edge/manifest/load.py:load_manifest",
        "sdk/trt_edge/manifest/source.py:read_source",
    ]


def test_the_walk_up_to_export_holds_its_ceiling(tool: ModuleType, tmp_path: Path) -> None:
    walk = tool.walk_build(MANIFEST, tmp_path, until="export")
    listing = "\n  ".join(walk.stops)
    assert walk.stops[0] == "sdk/trt_edge/pipeline/run.py:build"
    assert len(walk.stops) <= STOPS_BEFORE_EXPORT, f"{walk.summary()}:\n  {listing}"
    assert walk.returns <= RETURNS_BEFORE_EXPORT, f"{walk.summary()}:\n  {listing}"
    # The manifest is read once: one call reads the file, none parses its text again.
    readers = [s for s in walk.stops if s.endswith(":read_source")]
    assert readers == ["sdk/trt_edge/manifest/source.py:read_source"], listing
