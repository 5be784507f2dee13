"""A directory as a reproducible `.tar.gz`: same files and modes, same bytes.

Entries are sorted by path and sit under one top-level directory; owners are
0/0 without names; every mtime is `mtime` (SOURCE_DATE_EPOCH by convention);
modes are normalised to 0755 for directories and executables and 0644 for
everything else; the gzip header carries no name and no time. Symlinks and
special files are refused rather than silently dropped. The archive is written
to a temp file beside the target and renamed, so a reader never sees half of it
and an interrupted run leaves the previous archive in place.
"""

from __future__ import annotations

import gzip
import os
import stat
import tarfile
import tempfile
from pathlib import Path

from build_error import DeviceBuildError


def _mode(path: Path) -> int:
    if path.is_dir() or path.stat().st_mode & stat.S_IXUSR:
        return 0o755
    return 0o644


def write_tar_gz(tree: Path, archive: Path, mtime: int) -> Path:
    """Pack `tree` as `<tree name>/...` into `archive` (atomically); return `archive`."""
    paths = sorted(tree.rglob("*"), key=lambda p: p.relative_to(tree).as_posix())
    for path in paths:
        if path.is_symlink() or not (path.is_dir() or path.is_file()):
            raise DeviceBuildError(f"{path}: only plain files and directories can be packed")
    archive.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{archive.name}.", dir=archive.parent)
    try:
        with (
            os.fdopen(fd, "wb") as raw,
            gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as gz,
            tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar,
        ):
            for path in [tree, *paths]:
                rel = path.relative_to(tree).as_posix()
                info = tarfile.TarInfo(tree.name if rel == "." else f"{tree.name}/{rel}")
                info.mtime = mtime
                info.uid = info.gid = 0
                info.uname = info.gname = ""
                info.mode = _mode(path)
                if path.is_dir():
                    info.type = tarfile.DIRTYPE
                    tar.addfile(info)
                else:
                    info.size = path.stat().st_size
                    with open(path, "rb") as fh:
                        tar.addfile(info, fh)
        os.chmod(tmp_name, 0o644)
        os.replace(tmp_name, archive)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise
    return archive
