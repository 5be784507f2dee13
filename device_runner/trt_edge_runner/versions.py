"""Model versions a device can order: `MAJOR.MINOR.PATCH[-PRE][+BUILD]`, compared as SemVer 2.0.

Anti-rollback (the agent's per-model version floor) needs to know whether a bundle is
older than what a device had. The manifest's `metadata.version` is any string, so
the device decides what it can compare and refuses the rest rather than guess:

- three numeric fields without leading zeros (`1.2.0`, not `1.2` or `01.2.0`);
- an optional pre-release after `-`: dot-separated identifiers of `[0-9A-Za-z-]`
  (`1.2.0-rc.1`), numeric ones without leading zeros; a pre-release orders *below*
  its release (`1.2.0-rc.1 < 1.2.0`), identifiers compare left to right, numeric
  ones numerically and below alphanumeric ones, and a longer list wins a tie
  (`rc < rc.1`);
- optional build metadata after `+` (`1.2.0+jetson`), which does **not** take part in
  the order: `1.2.0+a` and `1.2.0+b` are the same version, so the content check
  (same version, different `bundle.json` → refused) applies to them.

Standard library only: this module ships to devices.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import total_ordering

from trt_edge_runner.errors import EXIT_FAILED, TrtEdgeError

_NUMBER = r"(0|[1-9][0-9]*)"
_IDENT = r"(?:0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*)"
_VERSION = re.compile(  # used with fullmatch: no "$" (it would accept a trailing newline)
    rf"{_NUMBER}\.{_NUMBER}\.{_NUMBER}"
    rf"(?:-({_IDENT}(?:\.{_IDENT})*))?"
    r"(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?"
)
# A version longer than this is not a version a person wrote.
MAX_VERSION_LENGTH = 128
VERSION_FORM = "MAJOR.MINOR.PATCH[-PRE][+BUILD], e.g. 1.2.0 or 1.3.0-rc.1"


class VersionError(TrtEdgeError):
    """A model version the device cannot order against another one (exit 1: refused)."""

    exit_code = EXIT_FAILED


@total_ordering
@dataclass(frozen=True, eq=False, repr=False, slots=True)
class Version:
    """A parsed version; `==`/`<` follow SemVer precedence (build metadata ignored, so the
    comparisons and the hash are written below rather than generated from every field)."""

    text: str
    major: int
    minor: int
    patch: int
    pre: tuple[str, ...]
    build: str

    def _key(self) -> tuple[int, int, int, int, tuple[tuple[int, int, str], ...]]:
        # A release (no pre-release) sorts after every pre-release of the same triple.
        pre = tuple((1, 0, p) if not p.isdigit() else (0, int(p), "") for p in self.pre)
        return (self.major, self.minor, self.patch, 0 if self.pre else 1, pre)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Version) and self._key() == other._key()

    def __lt__(self, other: Version) -> bool:
        return self._key() < other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"Version({self.text!r})"


def parse_version(text: str, what: str = "version") -> Version:
    """`text` as a Version, or VersionError saying which form a device can compare."""
    match = _VERSION.fullmatch(text) if len(text) <= MAX_VERSION_LENGTH else None
    if match is None:
        raise VersionError(
            f"{what} {text[:MAX_VERSION_LENGTH]!r} is not a version a device can order "
            f"({VERSION_FORM}), so anti-rollback cannot tell whether it is older than what "
            "a device had",
            hint="set metadata.version in the manifest to MAJOR.MINOR.PATCH and rebuild",
        )
    major, minor, patch, pre, build = match.groups()
    return Version(
        text,
        int(major),
        int(minor),
        int(patch),
        tuple(pre.split(".")) if pre else (),
        build or "",
    )
