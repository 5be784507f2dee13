"""Lock files: exact `name==version` pins, each with the sha256 of the file pip installs.

The format is pip's own hash-checking requirements format, so the images install with
`pip install --no-index --find-links WHEELS --require-hashes --no-deps -r lock.txt`
and pip itself refuses any wheel whose bytes differ. Every dependency is listed
explicitly (`--no-deps`): the images carry exactly the closure written here, which is
smaller than the packages' declared extras (executorch declares test and tokenizer
dependencies a builder does not need) and cannot drift.

The lock hash (`lock_sha256`) is over the canonical entries, not the file bytes, so
comments and formatting do not change an image's identity.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from trt_edge_runner import durable
from trt_edge_runner.bundle_format import file_sha256 as file_sha256

from trt_edge.containers.errors import LockFileError

_HASH_RE = re.compile(r"--hash=sha256:([0-9a-f]{64})$")
_PIN_RE = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([A-Za-z0-9.+!_-]+)$")


@dataclass(frozen=True)
class LockEntry:
    """One pinned distribution and the hashes pip accepts for it."""

    name: str  # as written in the lock
    version: str
    hashes: tuple[str, ...]
    line: int  # 1-based line of the pin, for messages

    @property
    def key(self) -> str:
        """PEP 503 normalized name: what wheel file names and pip compare."""
        return normalize_name(self.name)

    def requirement(self) -> str:
        hashes = " ".join(f"--hash=sha256:{h}" for h in self.hashes)
        return f"{self.name}=={self.version} {hashes}"


@dataclass(frozen=True)
class LockFile:
    path: Path
    entries: tuple[LockEntry, ...]

    def sha256(self) -> str:
        return lock_sha256(self.entries)

    def by_key(self) -> dict[str, LockEntry]:
        return {e.key: e for e in self.entries}


def normalize_name(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def lock_sha256(entries: Iterable[LockEntry]) -> str:
    """Hash of the sorted canonical pins: the identity images are labelled with."""
    lines = sorted(f"{e.key}=={e.version} " + ",".join(sorted(e.hashes)) for e in entries)
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """Join backslash continuations; drop comments and blanks; keep the first line number."""
    out: list[tuple[int, str]] = []
    buffer = ""
    start = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split(" #", 1)[0].rstrip() if not raw.lstrip().startswith("#") else ""
        if not buffer:
            start = number
        if line.endswith("\\"):
            buffer += line[:-1] + " "
            continue
        buffer += line
        if buffer.strip():
            out.append((start, buffer.strip()))
        buffer = ""
    if buffer.strip():
        out.append((start, buffer.strip()))
    return out


def parse_lock(path: Path, *, regenerate: str | None = None, allow_empty: bool = False) -> LockFile:
    """Read and check a lock file: every line a pin with at least one sha256, no duplicates.

    `regenerate` is the command that rewrites this lock (default: an image's
    `trt-edge images lock NAME`); `allow_empty` accepts a lock without pins (a model's
    requirements that the builder image already has all of)."""
    fix = regenerate or f"trt-edge images lock {path.parent.name}"
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise LockFileError(f"{path}: cannot read lock file: {err.strerror}") from err
    entries: list[LockEntry] = []
    seen: dict[str, int] = {}
    for number, line in _logical_lines(text):
        parts = line.split()
        pin = _PIN_RE.match(parts[0])
        if pin is None:
            raise LockFileError(
                f"{path}:{number}: expected 'name==version --hash=sha256:...', got {parts[0]!r}; "
                f"regenerate it with `{fix}`"
            )
        hashes: list[str] = []
        for option in parts[1:]:
            found = _HASH_RE.match(option)
            if found is None:
                raise LockFileError(
                    f"{path}:{number}: {pin.group(1)}: unsupported option {option!r} "
                    "(only --hash=sha256:<64 hex> is allowed in a lock file)"
                )
            hashes.append(found.group(1))
        if not hashes:
            raise LockFileError(
                f"{path}:{number}: {pin.group(1)}=={pin.group(2)} has no --hash; every pin "
                f"needs one (regenerate with `{fix}`)"
            )
        entry = LockEntry(pin.group(1), pin.group(2), tuple(hashes), number)
        if entry.key in seen:
            raise LockFileError(
                f"{path}:{number}: {entry.name} is pinned twice (first on line {seen[entry.key]})"
            )
        seen[entry.key] = number
        entries.append(entry)
    if not entries and not allow_empty:
        raise LockFileError(f"{path}: lock file has no pins")
    return LockFile(path, tuple(entries))


def parse_requirements_in(path: Path) -> list[tuple[str, str]]:
    """The human-edited input: `name==version` lines (exact pins only), in order."""
    pins: list[tuple[str, str]] = []
    for number, line in _logical_lines(path.read_text(encoding="utf-8")):
        pin = _PIN_RE.match(line.split()[0])
        if pin is None or len(line.split()) != 1:
            raise LockFileError(
                f"{path}:{number}: expected an exact pin 'name==version', got {line!r}"
            )
        pins.append((pin.group(1), pin.group(2)))
    return pins


SDIST_SUFFIX = ".tar.gz"


def is_sdist(filename: str) -> bool:
    return filename.endswith(SDIST_SUFFIX)


def dist_name_version(filename: str) -> tuple[str, str]:
    """(name, version) of a wheel, or of an sdist `name-version.tar.gz` (PEP 625 names;
    only images that list the package in `pip.sdists` lock one)."""
    if is_sdist(filename):
        name, dash, version = filename[: -len(SDIST_SUFFIX)].rpartition("-")
        if not dash or not name or not version:
            raise LockFileError(f"{filename}: not a 'name-version.tar.gz' sdist file name")
        return name, version
    return wheel_name_version(filename)


def wheel_name_version(filename: str) -> tuple[str, str]:
    """`torch-2.13.0+cpu-cp311-...whl` → (`torch`, `2.13.0+cpu`) (PEP 427 file names)."""
    if not filename.endswith(".whl"):
        raise LockFileError(f"{filename}: not a wheel; images install wheels only")
    parts = filename[: -len(".whl")].split("-")
    if len(parts) < 5:
        raise LockFileError(f"{filename}: not a PEP 427 wheel file name")
    return parts[0], parts[1]


def render_lock(image: str, source: str, entries: Iterable[LockEntry]) -> str:
    header = (
        f"# Lock file of image '{image}': every wheel the image installs, with its sha256.\n"
        f"# Generated by `trt-edge images lock {image}` from {source}; do not edit by hand.\n"
        "# Installed with: pip install --no-index --find-links WHEELS --require-hashes "
        "--no-deps -r lock.txt\n"
    )
    return header + render_pins(entries)


def render_pins(entries: Iterable[LockEntry]) -> str:
    """The pins in pip's hash-checking format, one continued line per hash."""
    body = []
    for entry in entries:
        hashes = " \\\n".join(f"    --hash=sha256:{h}" for h in entry.hashes)
        body.append(f"{entry.name}=={entry.version} \\\n{hashes}\n")
    return "".join(body)


def write_atomic(path: Path, text: str) -> None:
    """Write through a temp file in the same folder and rename: never a half-written lock."""
    durable.write_atomic(path, text.encode("utf-8"))
