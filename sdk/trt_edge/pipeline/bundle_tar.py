"""A bundle as one deterministic `.tar` for transport (rollouts, `scp`, artifact stores).

Same bundle → same bytes: entries sorted, owner 0/0 without names, modes
normalised (0755 dirs, 0644 files), every mtime set to the bundle's source date
(`provenance.source_date_epoch`), uncompressed (gzip would stamp its own time).
Entries sit under `<bundle dir name>/`. Written through the atomic writer
(`trt_edge_runner.durable`), so a reader never sees half a tar.
"""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

from trt_edge_runner.bundle_format import BUNDLE_JSON
from trt_edge_runner.durable import atomic_file


def _source_date(bundle_dir: Path) -> int:
    try:
        doc = json.loads((bundle_dir / BUNDLE_JSON).read_bytes())
        value = doc.get("provenance", {}).get("source_date_epoch", 0)
        return int(value) if isinstance(value, int) and value >= 0 else 0
    except (OSError, ValueError, AttributeError):
        return 0


def write_bundle_tar(bundle_dir: Path | str, tar_path: Path | str) -> Path:
    """Write `bundle_dir` as a reproducible tar at `tar_path` (atomically); return the path."""
    bundle_dir = Path(bundle_dir)
    tar_path = Path(tar_path)
    if not (bundle_dir / BUNDLE_JSON).is_file():
        raise FileNotFoundError(f"{bundle_dir}: not a bundle (no {BUNDLE_JSON})")
    mtime = _source_date(bundle_dir)
    prefix = bundle_dir.name
    tar_path.parent.mkdir(parents=True, exist_ok=True)
    with (
        atomic_file(tar_path, mode=0o600) as raw,
        tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar,
    ):
        paths = sorted(bundle_dir.rglob("*"), key=lambda p: p.relative_to(bundle_dir).as_posix())
        for path in [bundle_dir, *paths]:
            rel = path.relative_to(bundle_dir).as_posix()
            name = prefix if rel == "." else f"{prefix}/{rel}"
            info = tarfile.TarInfo(name)
            info.mtime = mtime
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            if path.is_dir():
                info.type = tarfile.DIRTYPE
                info.mode = 0o755
                tar.addfile(info)
            elif path.is_file():
                info.size = path.stat().st_size
                info.mode = 0o644
                with open(path, "rb") as fh:
                    tar.addfile(info, fh)
            # (symlinks and special files are not part of a bundle and are skipped)
    return tar_path
