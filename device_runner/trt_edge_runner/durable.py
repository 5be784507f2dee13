"""Durable, atomic file writes, and the check that a path can be written at all.

Every file trt-edge writes for someone else to read — device state, keys, bundle
tars, reports, saved outputs, extracted engines — goes through `atomic_file`: a
temporary sibling, fsynced, renamed over the target, then the directory fsynced.
A reader (or a process restarted after a power cut or SIGKILL) sees the old
content or the new, never a torn file: `os.replace` is atomic within one
filesystem, and the two fsyncs make the data and the new directory entry reach the
disk before the caller moves on. The device agent and the host share this one
module (the host may import the device package, never the reverse).

The temporary sibling comes from `mkstemp`: a random name opened O_CREAT|O_EXCL,
so a file or symlink planted at a guessable name is never opened, and a symlink
planted at the target itself is replaced by the rename, never followed. It gets
its final mode by fchmod before the first byte lands, so a private key is never
readable by others, not even half-written. Its name starts `.NAME.tmp-`, which
lets the agent's `recover()` sweep leftovers of a killed write.

`unwritable` answers "could a file (or directory) be created here?" without
creating anything, so a command can refuse a bad output path before its slow work.
"""

from __future__ import annotations

import os
import secrets
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Literal

TEMP_MARK = ".tmp-"


def fsync_dir(directory: Path) -> None:
    """Flush a directory entry change (create, rename, unlink) to disk."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextmanager
def atomic_file(path: Path | str, mode: int = 0o644) -> Iterator[BinaryIO]:
    """A binary file object whose content replaces `path` whole when the block ends.

    For writers that want a file object (`np.savez`, `tarfile`, a subprocess's
    stdout, matplotlib's `savefig`). If the block raises — or the process dies
    inside it — `path` is left as it was and the temporary file is removed (a
    killed process leaves only a `.NAME.tmp-*` sibling behind).
    """
    path = Path(path)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}{TEMP_MARK}", dir=path.parent)
    tmp = Path(tmp_name)
    try:
        try:
            os.fchmod(fd, mode)
            handle = os.fdopen(fd, "wb")
        except BaseException:
            os.close(fd)
            raise
        with handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)


def write_atomic(path: Path | str, data: bytes, mode: int = 0o644) -> None:
    """Replace `path` with `data` so that a crash leaves the old or the new file, whole."""
    with atomic_file(path, mode) as handle:
        handle.write(data)


def write_atomic_chunks(
    path: Path | str, chunks: Iterable[bytes | bytearray | memoryview], mode: int = 0o644
) -> None:
    """Replace `path` with the concatenation of `chunks`, streamed as they come.

    Made for large payloads held as memoryviews (an engine inside a memory-mapped
    `.pte`): a chunk larger than the file buffer is written straight from the
    caller's memory, so the payload is never copied into a Python object.
    """
    with atomic_file(path, mode) as handle:
        for chunk in chunks:
            handle.write(chunk)


def replace_symlink(link: Path, target: str) -> None:
    """Point `link` at `target` atomically: a randomly named new link renamed over the old."""
    tmp = link.with_name(f".{link.name}{TEMP_MARK}{secrets.token_hex(8)}")
    os.symlink(target, tmp)  # fails rather than follows if the name exists
    try:
        os.replace(tmp, link)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_dir(link.parent)


UnwritableReason = Literal["is_directory", "not_a_directory", "blocked", "permission"]


@dataclass(frozen=True)
class Unwritable:
    """Why nothing can be written at a path; `where` is the path or the ancestor at fault.

    - `is_directory`: a file was wanted, but the path is a directory;
    - `not_a_directory`: a directory was wanted, but the path is something else;
    - `blocked`: an ancestor that would have to be a directory is a file;
    - `permission`: the nearest existing ancestor (maybe the path itself) is not a
      directory this user can create entries in.
    """

    reason: UnwritableReason
    where: Path

    def describe(self) -> str:
        """The finding as a clause, e.g. `/data is not writable`, for callers' messages."""
        if self.reason == "is_directory":
            return f"{self.where} is a directory"
        if self.reason == "permission":
            return f"{self.where} is not writable"
        return f"{self.where} is not a directory"


def unwritable(path: Path | str, *, directory: bool = False) -> Unwritable | None:
    """Why a file (or, with `directory=True`, a directory) cannot be made at `path`; None if
    it can. Creates nothing: missing folders are fine when their nearest existing
    ancestor is a writable directory (the writer creates them)."""
    path = Path(path)
    if directory and path.exists() and not path.is_dir():
        return Unwritable("not_a_directory", path)
    if not directory and path.is_dir():
        return Unwritable("is_directory", path)
    ancestor = path if directory else path.parent
    while not ancestor.exists() and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        return Unwritable("blocked", ancestor)
    if not os.access(ancestor, os.W_OK | os.X_OK):
        return Unwritable("permission", ancestor)
    return None


def make_writable_dir(directory: Path | str) -> str | None:
    """Create `directory` (and missing parents) when it can be written; else say why not.

    Returns None on success, or a clause such as `/srv is not writable` for the
    caller's message; nothing is created when the answer is no.
    """
    directory = Path(directory)
    problem = unwritable(directory, directory=True)
    if problem is not None:
        return problem.describe()
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return exc.strerror or str(exc)
    return None
