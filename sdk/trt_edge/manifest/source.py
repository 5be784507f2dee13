"""Step 1, read: a manifest file → `ManifestSource`, the one value the later steps take.

The path is read here, once. Parsing, the schema comment's check, resolution and the
diagnostics' file names all take this value (or what it parses into), never the path
again, so the file a manifest came from is decided in one place (docs/design.md, "The
build reads as a chain").
"""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from trt_edge.manifest.diagnostics import Diagnostic
from trt_edge.manifest.locations import LocationIndex, SourceLocations


@dataclass(frozen=True)
class ManifestSource:
    """A manifest file as read: its name as the user gave it (what diagnostics show), its
    absolute path (what the resolved manifest records), its bytes and its text. `text` is
    None when the file could not be read or is not UTF-8; `problems` then says why."""

    given: Path
    path: Path  # absolute (`given` when the file could not be read)
    raw: bytes | None
    text: str | None
    problems: tuple[Diagnostic, ...] = ()

    @property
    def directory(self) -> Path:
        """Where the manifest's relative paths (entrypoint, schema comment) start."""
        return self.path.parent

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.raw or b"").hexdigest()

    def located(self, diagnostics: list[Diagnostic]) -> list[Diagnostic]:
        """`diagnostics` located in this file (as the user named it)."""
        return [dataclasses.replace(d, file=str(self.given)) for d in diagnostics]

    def locations(self, index: LocationIndex) -> SourceLocations:
        """The parse step's value positions, frozen, as positions in this file."""
        return SourceLocations(self.path, MappingProxyType(dict(index.values)))


def read_source(path: str | Path) -> ManifestSource:
    """The file at `path`, read and decoded; never raises for a bad file (`problems`)."""
    given = Path(path)
    try:
        raw = given.read_bytes()
    except FileNotFoundError:
        message = "no such file: check the path (manifests are usually named manifest.yaml)"
    except IsADirectoryError:
        hint = " (did you mean its manifest.yaml?)" if (given / "manifest.yaml").is_file() else ""
        message = f"this is a directory, not a manifest file{hint}"
    except OSError as exc:
        message = f"cannot read the file: {exc.strerror or exc}"
    else:
        absolute = given.resolve()
        try:
            return ManifestSource(given, absolute, raw, raw.decode("utf-8").removeprefix("\ufeff"))
        except UnicodeDecodeError as exc:
            return ManifestSource(given, absolute, raw, None, (_not_utf8(raw, exc),))
    return ManifestSource(given, given, None, None, (_io_error(1, 1, message),))


def _not_utf8(raw: bytes, exc: UnicodeDecodeError) -> Diagnostic:
    before = raw[: exc.start]
    line = before.count(b"\n") + 1
    col = exc.start - (before.rfind(b"\n") + 1) + 1
    message = f"not UTF-8 text (byte 0x{raw[exc.start]:02x}); save the manifest as UTF-8"
    return _io_error(line, col, message)


def _io_error(line: int, col: int, message: str) -> Diagnostic:
    return Diagnostic("", line, col, "error", "", message, "io")
