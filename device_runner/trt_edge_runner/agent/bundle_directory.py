"""Read a bundle directory without trusting it, as `tarball.BundleTar` reads an archive.

The follower (`trt_edge_runner.follow`) assembles a bundle from its content-addressed blob
store as a directory of hard links, and installs it through the same transaction as a
`.tar` (`agent/install.py`): one install path, whatever carried the bundle. So this class
offers what the transaction asks of a source — the small signed documents first, then an
extraction of exactly the listed files into staging — and holds the directory to the same
integrity rule (`trt_edge_runner.bundle_integrity`: no links, nothing unlisted, sizes as
listed) before anything is extracted. Extraction hard-links where it can (the blob store and
the slots share one file system under the agent root: no second copy of the weights) and
copies where it cannot; staging is hashed afterwards, as for a tar.
"""

from __future__ import annotations

import errno
import os
import shutil
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Protocol

from trt_edge_runner.agent.errors import InstallRefused
from trt_edge_runner.bundle_format import BUNDLE_SIG, UNLISTED_FILES, FileEntry
from trt_edge_runner.bundle_integrity import (
    BundleProblemsError,
    check_directory,
    read_document,
    refuse,
)
from trt_edge_runner.durable import fsync_dir


class BundleSource(Protocol):
    """What the install transaction reads a bundle through: `BundleTar` or `BundleDirectory`."""

    def read_document(self, rel: str) -> bytes: ...

    def extract(self, dest: Path, listed: Mapping[str, FileEntry]) -> None: ...


class BundleDirectory:
    """A bundle directory offered for install (`install_bundle` given a directory)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def read_document(self, rel: str) -> bytes:
        """The bytes of `bundle.json` or `bundle.sig`, held to the rule (no link, size-capped)."""
        try:
            return read_document(self.path, rel)
        except FileNotFoundError:
            hint = (
                " (the bundle is unsigned: sign it with `trt-edge sign`)"
                if rel == BUNDLE_SIG
                else ""
            )
            raise InstallRefused(f"{self.path}: {rel} missing{hint}") from None
        except BundleProblemsError as exc:
            raise InstallRefused(str(exc)) from None

    def extract(self, dest: Path, listed: Mapping[str, FileEntry]) -> None:
        """Link (or copy) exactly the listed files and the two documents into empty `dest`,
        after refusing every problem the directory has under the rule (sizes only)."""
        try:
            refuse(str(self.path), check_directory(self.path, listed, digests=False))
        except BundleProblemsError as exc:
            raise InstallRefused(str(exc)) from None
        for rel in sorted(set(listed) | UNLISTED_FILES):
            parts = PurePosixPath(rel).parts
            source, target = self.path.joinpath(*parts), dest.joinpath(*parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            _link_or_copy(source, target)
        for directory, _dirs, _files in os.walk(dest):
            fsync_dir(Path(directory))


def _link_or_copy(source: Path, target: Path) -> None:
    """A hard link where the file system allows one (same device), else a copy."""
    try:
        os.link(source, target, follow_symlinks=False)
    except OSError as exc:
        if exc.errno not in (errno.EXDEV, errno.EPERM, errno.EMLINK, errno.ENOTSUP):
            raise
        shutil.copyfile(source, target, follow_symlinks=False)
        with target.open("rb+") as handle:
            os.fsync(handle.fileno())
