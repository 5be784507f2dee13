"""Read a bundle `.tar` without trusting it: small signed documents first, then a safe extraction.

A transported bundle is `NAME-VERSION/{bundle.json, bundle.sig, model.pte, ...}`
(one top directory) or the same files at the top level. The agent reads only
`bundle.json` and `bundle.sig` (size-capped) until the signature and the target
fingerprint are accepted. Extraction then first holds the archive's members to
the bundle integrity rule (`trt_edge_runner.bundle_integrity`, sizes only: the
bytes are hashed once extracted), refusing with every problem at once — links,
devices, absolute paths and `..`, members outside the top directory, anything not
listed in the signed `bundle.json` — and then writes exactly the listed regular
files. tarfile's `data` filter (PEP 706) is consulted as well where it exists, so
one mistake in either does not open a hole.

Hardened where the install fuzz test (`tests/agent/test_install_fuzz.py`) found holes:

- only plain (uncompressed) tars are read, as `trt-edge pack` writes them: a gzip,
  bzip2, xz or zstd archive is refused by its magic bytes, so no decompressor (and no
  decompression bomb, nor its `EOFError`/`zlib.error` on a truncated stream) is in the
  path;
- everything tarfile raises for a malformed archive beyond `TarError` — an
  `OverflowError` from a pax size no seek can take, `ValueError`/`UnicodeError` from
  fields it cannot decode, `EOFError` — is a refusal naming the archive (`_reading`);
- a regular member is a plain file only: sparse (GNU or pax `GNU.sparse.*`) and
  contiguous members are `not_regular`, since `pack` never writes them and tarfile
  would expand a sparse one to any size its map claims.
"""

from __future__ import annotations

import os
import shutil
import tarfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from typing import NoReturn

from trt_edge_runner.agent.errors import InstallRefused
from trt_edge_runner.bundle_format import BUNDLE_JSON, BUNDLE_SIG, UNLISTED_FILES, FileEntry
from trt_edge_runner.bundle_integrity import (
    MAX_DOCUMENT_BYTES,
    MAX_ENTRIES,
    BundleProblemsError,
    Entry,
    Problem,
    ProblemKind,
    find_problems,
    refuse,
)
from trt_edge_runner.durable import fsync_dir

# Every member below the bundle root, plus the top directory itself.
MAX_MEMBERS = MAX_ENTRIES + 1

# What tarfile raises for a malformed archive, besides TarError (found by the fuzz test).
MALFORMED = (tarfile.TarError, EOFError, OverflowError, ValueError, UnicodeError)
# Magic bytes of the compressed formats tarfile would otherwise decompress.
COMPRESSED = {
    b"\x1f\x8b": "gzip",
    b"BZh": "bzip2",
    b"\xfd7zXZ\x00": "xz",
    b"\x28\xb5\x2f\xfd": "zstd",
}
# The member types a bundle file may have: plain regular files (`pack` writes REGTYPE).
PLAIN_FILE_TYPES = (tarfile.REGTYPE, tarfile.AREGTYPE)


def _damaged(path: Path, exc: BaseException) -> NoReturn:
    detail = str(exc) or type(exc).__name__
    raise InstallRefused(f"{path}: damaged archive: {detail}") from None


@contextmanager
def _reading(path: Path) -> Iterator[None]:
    """Turn what tarfile raises on a malformed archive into a refusal naming `path`."""
    try:
        yield
    except MALFORMED as exc:
        _damaged(path, exc)


class BundleTar:
    """An opened bundle archive: its members by path relative to the bundle root."""

    def __init__(self, path: Path, archive: tarfile.TarFile) -> None:
        self.path = path
        self.archive = archive
        self.members: dict[str, tarfile.TarInfo] = {}
        self.prefix = ""
        # Members that cannot be part of any bundle (paths outside it, duplicates).
        self.misplaced: list[Problem] = []
        self._index()

    def _refuse(self, message: str) -> InstallRefused:
        return InstallRefused(f"{self.path}: {message}")

    def _index(self) -> None:
        raw: list[tarfile.TarInfo] = []
        with _reading(self.path):
            for count, member in enumerate(self.archive, start=1):
                if count > MAX_MEMBERS:
                    raise self._refuse(f"more than {MAX_MEMBERS} entries; not a trt-edge bundle")
                raw.append(member)
        docs = [
            m.name for m in raw if PurePosixPath(m.name).name == BUNDLE_JSON and not _unsafe(m.name)
        ]
        if not docs:
            raise self._refuse(f"no {BUNDLE_JSON} inside; not a trt-edge bundle")
        top = min(docs, key=lambda n: len(PurePosixPath(n).parts))
        parent = PurePosixPath(top).parent
        self.prefix = "" if str(parent) == "." else str(parent)
        for member in raw:
            rel = self._relative(member.name)
            if rel is None:
                continue
            if rel in self.members:
                self.misplaced.append(
                    Problem(ProblemKind.EXTRA, rel, "appears twice in the archive")
                )
                continue
            self.members[rel] = member

    def _relative(self, name: str) -> str | None:
        """Path below the bundle root; None for the root itself and for names that are not
        inside it (those are recorded as `outside` problems)."""
        pure = PurePosixPath(name)
        if _unsafe(name):
            self.misplaced.append(
                Problem(ProblemKind.OUTSIDE, name, "absolute path or '..' in the archive")
            )
            return None
        if self.prefix:
            prefix = PurePosixPath(self.prefix)
            if pure == prefix:
                return None
            if pure.parts[: len(prefix.parts)] != prefix.parts:
                self.misplaced.append(
                    Problem(
                        ProblemKind.OUTSIDE, name, f"outside the bundle directory {self.prefix}/"
                    )
                )
                return None
            pure = PurePosixPath(*pure.parts[len(prefix.parts) :])
        rel = pure.as_posix()
        return None if rel in ("", ".") else rel

    def entries(self) -> list[Entry]:
        """The archive's members as a bundle tree, for the integrity rule."""
        return [_entry(rel, member) for rel, member in sorted(self.members.items())]

    def read_document(self, rel: str) -> bytes:
        """The bytes of a small regular member (`bundle.json`, `bundle.sig`)."""
        member = self.members.get(rel)
        if member is None:
            hint = (
                " (the bundle is unsigned: sign it with `trt-edge sign`)"
                if rel == BUNDLE_SIG
                else ""
            )
            raise self._refuse(f"{rel} missing from the archive{hint}")
        if _entry(rel, member).kind != "file":
            raise self._refuse(f"{rel}: not a regular file")
        if member.size > MAX_DOCUMENT_BYTES:
            raise self._refuse(f"{rel}: {member.size} bytes, more than {MAX_DOCUMENT_BYTES}")
        with _reading(self.path):
            handle = self.archive.extractfile(member)
            if handle is None:  # pragma: no cover - a plain file always has a reader
                raise self._refuse(f"{rel}: cannot be read")
            data = handle.read()
        if len(data) != member.size:
            raise self._refuse(f"{rel}: truncated in the archive")
        return data

    def extract(self, dest: Path, listed: Mapping[str, FileEntry]) -> None:
        """Extract exactly the listed files (+ bundle.json/.sig) into the empty directory `dest`.

        Refuses first, with every problem the archive has under the integrity rule.
        """
        problems = sorted(
            [*self.misplaced, *find_problems(self.entries(), listed, digest=None)],
            key=lambda p: (p.path, p.kind.value),
        )
        try:
            refuse(str(self.path), problems)
        except BundleProblemsError as exc:
            raise InstallRefused(str(exc)) from None
        wanted = set(listed) | UNLISTED_FILES
        selected = [
            m
            for rel, m in sorted(self.members.items())
            if rel in wanted and _entry(rel, m).kind == "file"
        ]
        for member in selected:
            self._write_member(member, dest)
        _fsync_tree(dest)

    def _write_member(self, member: tarfile.TarInfo, dest: Path) -> None:
        """Write one checked regular member below `dest` ourselves: new file only, no link
        followed, exactly `member.size` bytes. tarfile's `data` filter (PEP 706; absent
        from some device Pythons) is consulted as a second opinion where it exists."""
        data_filter = getattr(tarfile, "data_filter", None)
        if data_filter is not None:
            try:
                data_filter(member, str(dest))
            except tarfile.TarError as exc:
                raise self._refuse(
                    f"{member.name}: refused by tarfile's data filter: {exc}"
                ) from None
        rel = self._relative(member.name)
        if rel is None:  # pragma: no cover - only members below the root are selected
            return
        target = dest.joinpath(*PurePosixPath(rel).parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
        with _reading(self.path), os.fdopen(os.open(target, flags, 0o644), "wb") as out:
            source = self.archive.extractfile(member)
            if source is None:  # pragma: no cover - a plain file always has a reader
                raise self._refuse(f"{member.name}: cannot be read")
            shutil.copyfileobj(source, out)
            if out.tell() != member.size:
                raise self._refuse(f"{member.name}: truncated in the archive")


def _unsafe(name: str) -> bool:
    pure = PurePosixPath(name)
    return pure.is_absolute() or ".." in pure.parts


def _entry(rel: str, member: tarfile.TarInfo) -> Entry:
    if member.isfile() and member.type in PLAIN_FILE_TYPES and member.sparse is None:
        return Entry(rel, "file", member.size)
    if member.isfile():
        what = (
            "sparse file" if member.sparse is not None or member.issparse() else "contiguous file"
        )
        return Entry(rel, "other", 0, f"{what} in the archive")
    if member.isdir():
        return Entry(rel, "dir")
    if member.issym():
        return Entry(rel, "link", 0, f"symbolic link to {member.linkname}")
    if member.islnk():
        return Entry(rel, "link", 0, f"hard link to {member.linkname} in the archive")
    what = (
        "character device"
        if member.ischr()
        else "block device"
        if member.isblk()
        else "fifo"
        if member.isfifo()
        else "special member"
    )
    return Entry(rel, "other", 0, what)


def _fsync_tree(root: Path) -> None:
    """Make extracted files durable before the slot that holds them can become active."""
    for directory, _dirs, files in os.walk(root, topdown=False):
        for name in files:
            fd = os.open(os.path.join(directory, name), os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        fsync_dir(Path(directory))


def _compression(path: Path) -> str | None:
    """The compression `path` starts with (by magic bytes), if any."""
    with path.open("rb") as handle:
        head = handle.read(6)
    return next((name for magic, name in COMPRESSED.items() if head.startswith(magic)), None)


@contextmanager
def open_bundle_tar(path: Path) -> Iterator[BundleTar]:
    """Open `path` as a plain tar, or InstallRefused saying why not."""
    try:
        compressed = _compression(path)
    except FileNotFoundError:
        raise InstallRefused(f"{path}: no such file") from None
    except OSError as exc:
        raise InstallRefused(f"{path}: cannot be read: {exc.strerror or exc}") from None
    if compressed is not None:
        raise InstallRefused(
            f"{path}: a {compressed}-compressed archive; devices install the plain .tar that "
            "`trt-edge pack` writes (decompress it first)"
        )
    try:
        archive = tarfile.open(path, "r:")  # noqa: SIM115 - closed in `finally` below
    except MALFORMED as exc:
        raise InstallRefused(f"{path}: not a readable tar archive: {exc}") from None
    except OSError as exc:
        raise InstallRefused(f"{path}: cannot be read: {exc.strerror or exc}") from None
    try:
        yield BundleTar(path, archive)
    except tarfile.TarError as exc:  # every other tarfile call is inside `_reading`
        _damaged(path, exc)
    finally:
        archive.close()
