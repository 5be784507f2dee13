"""Diagnostics: every problem a manifest load finds, with the place it was found.

Loading never stops at the first problem (like Cog's `ValidationResult`): each
step appends `Diagnostic`s and the caller sees all of them at once. The `stage`
says which step found a problem, so callers and tests can tell a YAML syntax
error from a schema error from a semantic one without parsing messages.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TextIO

from trt_edge_runner.errors import EXIT_BAD_INPUT, TrtEdgeError, Where

if TYPE_CHECKING:
    from trt_edge.manifest.resolved import ResolvedManifest

Severity = Literal["error", "warning"]
# io: the file could not be read; parse: not YAML; schema: wrong keys or types;
# semantic: well-typed but inconsistent; compatibility: targets and backends.
Stage = Literal["io", "parse", "schema", "semantic", "compatibility"]


@dataclass(frozen=True)
class Diagnostic:
    """One problem: `FILE:LINE:COL: severity: path.in.manifest: message` (1-based line/col).

    The checks see a document, not a file: they leave `file` empty and the loader writes
    the manifest's path into every diagnostic once (`ManifestSource.located`)."""

    file: str
    line: int
    col: int
    severity: Severity
    path: str  # e.g. "profiles[1].dims.seq.min"; "" for the whole document
    message: str
    stage: Stage = "semantic"

    def __str__(self) -> str:
        where = self.path or "<document>"
        return f"{self.file}:{self.line}:{self.col}: {self.severity}: {where}: {self.message}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "line": self.line,
            "col": self.col,
            "severity": self.severity,
            "path": self.path,
            "message": self.message,
            "stage": self.stage,
        }


def sort_key(d: Diagnostic) -> tuple[int, int, int, str]:
    """Document order, errors before warnings at the same place."""
    return (d.line, d.col, 0 if d.severity == "error" else 1, d.message)


@dataclass
class LoadResult:
    """What `load_manifest` returns: the resolved manifest when there are no errors, and all
    diagnostics (warnings are allowed alongside a manifest)."""

    path: Path
    diagnostics: list[Diagnostic] = field(default_factory=list)
    manifest: ResolvedManifest | None = None

    @property
    def ok(self) -> bool:
        return self.manifest is not None and not self.errors

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "error"]

    @property
    def warnings(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "warning"]

    def to_dict(self) -> dict[str, Any]:
        return {
            "file": str(self.path),
            "ok": self.ok,
            "errors": len(self.errors),
            "warnings": len(self.warnings),
            "diagnostics": [d.to_dict() for d in self.diagnostics],
        }


class FieldProblem(TrtEdgeError):
    """A manifest value that a reader the semantic checks call (the Hugging Face folder,
    a requirement line) cannot use; `message` says what is wrong and what to do, and the
    checks turn it into a diagnostic at that value's place in the manifest."""

    exit_code = EXIT_BAD_INPUT


class ManifestError(TrtEdgeError):
    """A manifest with errors (exit 2, bad input); `diagnostics` holds every problem.

    The message is one line (`FILE: N errors in the manifest`); the diagnostics
    stay structured, and the CLI shell prints them under it exactly as
    `trt-edge validate` does (file:line:col, the source line, a caret).
    Subclasses say which step failed first, for callers that care.
    """

    exit_code = EXIT_BAD_INPUT

    def __init__(self, path: Path, diagnostics: list[Diagnostic]) -> None:
        self.path = path
        self.diagnostics = diagnostics
        unreadable = [d for d in self.errors if d.stage == "io"]
        if unreadable:  # the file itself: one line says it all
            super().__init__(unreadable[0].message, where=Where(path))
            return
        count = len(self.errors)
        super().__init__(
            f"{count} {'error' if count == 1 else 'errors'} in the manifest",
            where=Where(path),
            hint=f"fix them and run `trt-edge validate {path}`",
        )

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "error"]

    def print_details(self, stream: TextIO, *, color: bool) -> None:
        if any(d.stage == "io" for d in self.errors):
            return
        print_diagnostics(self.diagnostics, self.path, stream, color=color)

    def to_dict(self) -> dict[str, Any]:
        """The error document, with the same fields as `trt-edge validate --json`'s report."""
        doc = super().to_dict()
        doc.update(
            file=str(self.path),
            errors=len(self.errors),
            warnings=len(self.diagnostics) - len(self.errors),
            diagnostics=[d.to_dict() for d in self.diagnostics],
        )
        return doc


class ManifestIOError(ManifestError):
    """The manifest file could not be read."""


class ManifestParseError(ManifestError):
    """The manifest is not well-formed YAML."""


class ManifestSchemaError(ManifestError):
    """Unknown keys, missing keys or wrong types."""


class ManifestSemanticError(ManifestError):
    """Well-typed, but inconsistent (symbols, ranges, phases, files)."""


class ManifestCompatibilityError(ManifestError):
    """Targets or backends that do not exist or do not fit together."""


ERROR_TYPES: dict[Stage, type[ManifestError]] = {
    "io": ManifestIOError,
    "parse": ManifestParseError,
    "schema": ManifestSchemaError,
    "semantic": ManifestSemanticError,
    "compatibility": ManifestCompatibilityError,
}


def error_for(path: Path, diagnostics: list[Diagnostic]) -> ManifestError:
    """The typed error for a failed load: the type of the earliest stage that found an error."""
    order: tuple[Stage, ...] = ("io", "parse", "schema", "semantic", "compatibility")
    stages = {d.stage for d in diagnostics if d.severity == "error"}
    for stage in order:
        if stage in stages:
            return ERROR_TYPES[stage](path, diagnostics)
    return ManifestError(path, diagnostics)


# -- rendering: compiler-style text with the offending source line and a caret -----------
# Plain text is the default (greppable `FILE:LINE:COL: severity: path: message` lines, fit
# for CI logs and pipes). On a terminal the same text is coloured with rich, imported only
# then: `trt-edge validate` must start fast.


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
