"""Read a bundle `.tar` without trusting it: small signed documents first, then a safe extraction.

A transported bundle is `NAME-VERSION/{bundle.json, bundle.sig, model.pte, ...}`
(one top directory) or the same files at the top level. The agent reads only
`bundle.json` and `bundle.sig` (size-capped) until the signature and the target
fingerprint are accepted; extraction then admits exactly the files the signed
`bundle.json` lists, as regular files, under their listed sizes. Links, devices,
absolute paths and `..` are refused by our own checks *and* by tarfile's `data`
filter (PEP 706), so one mistake in either does not open a hole.
"""

from __future__ import annotations

import os
import shutil
import tarfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path, PurePosixPath

from trt_edge_runner.agent.errors import InstallRefused
from trt_edge_runner.bundle_format import BUNDLE_JSON, BUNDLE_SIG, FileEntry
from trt_edge_runner.durable import fsync_dir

MAX_MEMBERS = 256
MAX_DOCUMENT_BYTES = 4 << 20
MAX_BUNDLE_BYTES = 8 << 30


class BundleTar:
    """An opened bundle archive: its members by path relative to the bundle root."""

    def __init__(self, path: Path, archive: tarfile.TarFile) -> None:
        self.path = path
        self.archive = archive
        self.members: dict[str, tarfile.TarInfo] = {}
        self.prefix = ""
        self._index()

    def _refuse(self, message: str) -> InstallRefused:
        return InstallRefused(f"{self.path}: {message}")

    def _index(self) -> None:
        raw: list[tarfile.TarInfo] = []
        for count, member in enumerate(self.archive, start=1):
            if count > MAX_MEMBERS:
                raise self._refuse(f"more than {MAX_MEMBERS} entries; not a trt-edge bundle")
            raw.append(member)
        docs = [m.name for m in raw if PurePosixPath(m.name).name == BUNDLE_JSON]
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
                raise self._refuse(f"{member.name}: appears twice in the archive")
            self.members[rel] = member

    def _relative(self, name: str) -> str | None:
        """Path below the bundle root; refuses absolute paths and `..` anywhere."""
        pure = PurePosixPath(name)
        if pure.is_absolute() or ".." in pure.parts:
            raise self._refuse(f"{name}: absolute path or '..' in the archive; refused")
        if self.prefix:
            prefix = PurePosixPath(self.prefix)
            if pure == prefix:
                return None
            if pure.parts[: len(prefix.parts)] != prefix.parts:
                raise self._refuse(f"{name}: outside the bundle directory {self.prefix}/")
            pure = PurePosixPath(*pure.parts[len(prefix.parts) :])
        rel = pure.as_posix()
        return None if rel in ("", ".") else rel

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
        """Extract exactly the listed files (+ bundle.json/.sig) into the empty directory `dest`."""
        allowed = set(listed) | {BUNDLE_JSON, BUNDLE_SIG}
        parents = {str(p) for rel in allowed for p in PurePosixPath(rel).parents if str(p) != "."}
        selected: list[tarfile.TarInfo] = []
        total = 0
        for rel, member in sorted(self.members.items()):
            if member.isdir():
                if rel not in parents:
                    raise self._refuse(f"{member.name}: directory not part of the bundle")
                continue
            if not member.isfile():
                kind = "link" if member.issym() or member.islnk() else "special file"
                raise self._refuse(f"{member.name}: is a {kind}; bundles hold regular files only")
            if rel not in allowed:
                raise self._refuse(f"{member.name}: not listed in the signed {BUNDLE_JSON}")
            entry = listed.get(rel)
            if entry is not None and member.size != entry.size:
                raise self._refuse(
                    f"{member.name}: {member.size} bytes, "
                    f"the signed {BUNDLE_JSON} says {entry.size}"
                )
            total += member.size
            if total > MAX_BUNDLE_BYTES:
                raise self._refuse(f"more than {MAX_BUNDLE_BYTES} bytes of content; refused")
            selected.append(member)
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
        if rel is None:  # pragma: no cover - directories were filtered out by the caller
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
