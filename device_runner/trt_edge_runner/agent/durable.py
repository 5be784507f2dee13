"""Durable, atomic file updates: write a temporary sibling, fsync it, rename, fsync the directory.

A reader (or an agent restarted after a power cut or SIGKILL) sees either the old
content or the new, never a torn file: `os.replace` is atomic within one
filesystem, and the two fsyncs make the data and the new directory entry reach
the disk before the caller moves on to its next step.
"""

from __future__ import annotations

import os
import secrets
import tempfile
from pathlib import Path


def fsync_dir(directory: Path) -> None:
    """Flush a directory entry change (create, rename, unlink) to disk."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomic(path: Path, data: bytes, mode: int = 0o644) -> None:
    """Replace `path` with `data` so that a crash leaves the old or the new file, whole.

    The temporary sibling comes from `mkstemp` (random name, O_CREAT|O_EXCL, so a
    planted file or symlink is never opened) with mode 0600, and gets `mode` by
    fchmod before the first byte is written: a private key is never readable by
    others, not even half-written. Its name starts `.NAME.tmp-` so `recover()`
    can sweep leftovers.
    """
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.tmp-", dir=path.parent)
    tmp = Path(tmp_name)
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)


def replace_symlink(link: Path, target: str) -> None:
    """Point `link` at `target` atomically: a randomly named new link renamed over the old."""
    tmp = link.with_name(f".{link.name}.tmp-{secrets.token_hex(8)}")
    os.symlink(target, tmp)  # fails rather than follows if the name exists
    try:
        os.replace(tmp, link)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_dir(link.parent)
