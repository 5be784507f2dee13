"""Diagnostics: every problem a manifest load finds, with the place it was found.

Loading never stops at the first problem (like Cog's `ValidationResult`): each
step appends `Diagnostic`s and the caller sees all of them at once. The `stage`
says which step found a problem, so callers and tests can tell a YAML syntax
error from a schema error from a semantic one without parsing messages.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from trt_edge.manifest.resolved import ResolvedManifest

Severity = Literal["error", "warning"]
# io: the file could not be read; parse: not YAML; schema: wrong keys or types;
# semantic: well-typed but inconsistent; compatibility: targets and backends.
Stage = Literal["io", "parse", "schema", "semantic", "compatibility"]


@dataclass(frozen=True)
class Diagnostic:
    """One problem: `FILE:LINE:COL: severity: path.in.manifest: message` (1-based line/col)."""

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


class ManifestError(Exception):
    """A manifest with errors; `diagnostics` holds every problem (errors and warnings).

    Subclasses say which step failed first, for callers that care (e.g. exit codes).
    """

    def __init__(self, path: Path, diagnostics: list[Diagnostic]) -> None:
        self.path = path
        self.diagnostics = diagnostics
        super().__init__(self.render())

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "error"]

    def render(self) -> str:
        errors = self.errors
        lines = [str(d) for d in errors]
        noun = "error" if len(errors) == 1 else "errors"
        lines.append(
            f"{self.path}: {len(errors)} {noun}; fix them and run `trt-edge validate {self.path}`"
        )
        return "\n".join(lines)


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
