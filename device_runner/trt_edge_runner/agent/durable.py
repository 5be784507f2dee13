"""Durable, atomic file updates: write a temporary sibling, fsync it, rename, fsync the directory.

A reader (or an agent restarted after a power cut or SIGKILL) sees either the old
content or the new, never a torn file: `os.replace` is atomic within one
filesystem, and the two fsyncs make the data and the new directory entry reach
the disk before the caller moves on to its next step.
"""

from __future__ import annotations

import os
from pathlib import Path


def fsync_dir(directory: Path) -> None:
    """Flush a directory entry change (create, rename, unlink) to disk."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomic(path: Path, data: bytes, mode: int = 0o644) -> None:
    """Replace `path` with `data` so that a crash leaves the old or the new file, whole."""
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)


def replace_symlink(link: Path, target: str) -> None:
    """Point `link` at `target` atomically (a new link renamed over the old one)."""
    tmp = link.with_name(f".{link.name}.tmp-{os.getpid()}")
    tmp.unlink(missing_ok=True)
    os.symlink(target, tmp)
    os.replace(tmp, link)
    fsync_dir(link.parent)
