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
"""

from __future__ import annotations

import os
import shutil
import tarfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path, PurePosixPath

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
        if not member.isfile():
            raise self._refuse(f"{rel}: not a regular file")
        if member.size > MAX_DOCUMENT_BYTES:
            raise self._refuse(f"{rel}: {member.size} bytes, more than {MAX_DOCUMENT_BYTES}")
        handle = self.archive.extractfile(member)
        if handle is None:  # pragma: no cover - isfile() checked above
            raise self._refuse(f"{rel}: cannot be read")
        return handle.read()

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
        selected = [m for rel, m in sorted(self.members.items()) if rel in wanted and m.isfile()]
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
        source = self.archive.extractfile(member)
        if source is None:  # pragma: no cover - isfile() checked by the caller
            raise self._refuse(f"{member.name}: cannot be read")
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
        with os.fdopen(os.open(target, flags, 0o644), "wb") as out:
            shutil.copyfileobj(source, out)
            if out.tell() != member.size:
                raise self._refuse(f"{member.name}: truncated in the archive")


def _unsafe(name: str) -> bool:
    pure = PurePosixPath(name)
    return pure.is_absolute() or ".." in pure.parts


def _entry(rel: str, member: tarfile.TarInfo) -> Entry:
    if member.isfile():
        return Entry(rel, "file", member.size)
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


@contextmanager
def open_bundle_tar(path: Path) -> Iterator[BundleTar]:
    """Open `path` as a (possibly compressed) tar, or InstallRefused saying why not."""
    try:
        archive = tarfile.open(path, "r:*")  # noqa: SIM115 - closed in `finally` below
    except FileNotFoundError:
        raise InstallRefused(f"{path}: no such file") from None
    except (tarfile.TarError, OSError) as exc:
        raise InstallRefused(f"{path}: not a readable tar archive: {exc}") from None
    try:
        yield BundleTar(path, archive)
    except tarfile.TarError as exc:
        raise InstallRefused(f"{path}: damaged archive: {exc}") from None
    finally:
        archive.close()
