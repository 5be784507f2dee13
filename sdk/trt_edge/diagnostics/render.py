"""Render `Diagnostic`s as compiler-style text, with the offending source line and a caret.

Plain text is the default (greppable `FILE:LINE:COL: severity: path: message`
lines, fit for CI logs and pipes). On a terminal the same text is coloured with
rich, imported only then: `trt-edge validate` must start fast.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from trt_edge.manifest.diagnostics import Diagnostic


def _source_lines(path: Path) -> list[str]:
    try:
        return path.read_text("utf-8", errors="replace").splitlines()
    except OSError:
        return []


def render_plain(diagnostics: Sequence[Diagnostic], source: Path | None) -> list[str]:
    """Each diagnostic as its one-line form, followed by the source line and a caret."""
    lines = _source_lines(source) if source is not None else []
    out: list[str] = []
    for d in diagnostics:
        out.append(str(d))
        if d.stage != "io" and 1 <= d.line <= len(lines):
            text = lines[d.line - 1].expandtabs(1)
            out.append(f"    {text}")
            out.append(f"    {' ' * (d.col - 1)}^")
    return out


def print_diagnostics(
    diagnostics: Sequence[Diagnostic], source: Path | None, stream: TextIO, *, color: bool
) -> None:
    text = render_plain(diagnostics, source)
    if not color:
        for line in text:
            print(line, file=stream)
        return
    from rich.console import Console
    from rich.markup import escape

    console = Console(file=stream, highlight=False, soft_wrap=True)
    styles = {"error": "bold red", "warning": "bold yellow"}
    index = 0
    for d in diagnostics:
        head = text[index]
        index += 1
        style = styles[d.severity]
        where = f"{d.file}:{d.line}:{d.col}:"
        rest = head[len(where) :]
        marker = f" {d.severity}:"
        rest = rest[len(marker) :] if rest.startswith(marker) else rest
        console.print(
            f"[bold]{escape(where)}[/bold] [{style}]{d.severity}:[/{style}]{escape(rest)}"
        )
        while index < len(text) and text[index].startswith("    "):
            console.print(f"[dim]{escape(text[index])}[/dim]")
            index += 1
