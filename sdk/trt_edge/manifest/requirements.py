"""`model.requirements`: pip requirement lines, read with `packaging` (pip's own parser).

A line is a PEP 508 requirement from a package index — `transformers==5.23.0`,
`tokenizers>=0.22,<0.24`, optionally with extras and an environment marker. Lines
pip accepts only in requirement *files* (`-r`, `--hash`, `-e`) and direct URL
references (`name @ https://…`) are refused: a build must name versions an index
and a lock can pin. `packaging` is imported only when a manifest has requirements,
so `trt-edge validate` of any other manifest does not pay for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from trt_edge.manifest.diagnostics import FieldProblem


class RequirementLineError(FieldProblem):
    """A `model.requirements` line that is not a requirement this project accepts."""


@dataclass(frozen=True)
class Requirement:
    """One parsed line: the name as written, its normalised key and the parsed object."""

    line: str
    name: str
    key: str  # canonical (PEP 503) name: what importlib.metadata and pip compare
    parsed: Any  # packaging.requirements.Requirement

    def applies_here(self) -> bool:
        """False when the line's environment marker excludes this interpreter/platform."""
        marker = self.parsed.marker
        return marker is None or bool(marker.evaluate())

    def accepts(self, version: str) -> bool:
        """Whether `version` satisfies the line's specifiers (pre-releases included: a pin
        to an rc must accept that rc)."""
        return bool(self.parsed.specifier.contains(version, prereleases=True))


def parse_requirement(line: str) -> Requirement:
    from packaging.requirements import InvalidRequirement
    from packaging.requirements import Requirement as Parsed
    from packaging.utils import canonicalize_name

    text = line.strip()
    example = "write it like transformers==5.23.0"
    if not text:
        raise RequirementLineError(f"empty requirement line; {example}")
    if text.startswith("-"):
        raise RequirementLineError(
            f"{text!r} is a pip option, not a requirement; list packages only ({example})"
        )
    try:
        parsed = Parsed(text)
    except InvalidRequirement as exc:
        first = str(exc).splitlines()[0]
        raise RequirementLineError(
            f"{text!r} is not a pip requirement line ({first}); {example}"
        ) from None
    if parsed.url:
        raise RequirementLineError(
            f"{text!r} points at a URL; name a released version from the package index "
            f"instead ({example})"
        )
    return Requirement(
        line=text, name=parsed.name, key=canonicalize_name(parsed.name), parsed=parsed
    )
