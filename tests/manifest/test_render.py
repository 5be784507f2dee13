"""Diagnostic rendering: the caret lands under the reported column, colour changes no text."""

from __future__ import annotations

import io
from pathlib import Path

from trt_edge.manifest.diagnostics import Diagnostic, print_diagnostics, render_plain


def test_caret_sits_under_the_column(tmp_path: Path) -> None:
    source = tmp_path / "m.yaml"
    source.write_text("a: 1\nprofiles: [x]\n")
    d = Diagnostic(str(source), 2, 12, "error", "profiles[0]", "expected a mapping", "schema")
    lines = render_plain([d], source)
    assert lines[0] == f"{source}:2:12: error: profiles[0]: expected a mapping"
    assert lines[1] == "    profiles: [x]"
    assert lines[2].index("^") == lines[1].index("x")


def test_rich_output_has_the_same_text_as_plain(tmp_path: Path) -> None:
    source = tmp_path / "m.yaml"
    source.write_text("kind: [Model\n")
    diagnostics = [
        Diagnostic(str(source), 1, 7, "error", "kind", "bad [value]", "schema"),
        Diagnostic(str(source), 1, 1, "warning", "", "note", "semantic"),
    ]
    plain, rich = io.StringIO(), io.StringIO()
    print_diagnostics(diagnostics, source, plain, color=False)
    print_diagnostics(diagnostics, source, rich, color=True)
    assert rich.getvalue() == plain.getvalue()
    assert "<document>: note" in plain.getvalue()
