"""The follower's content-addressed blob store: resumable, size- and digest-checked downloads
under a disk budget.

    ROOT/follow/blobs/sha256/HEX           a whole, checked blob (never rewritten)
    ROOT/follow/blobs/sha256/HEX.partial   a download in progress: resumed from its size
    ROOT/follow/bundles/HEX                a bundle assembled from blobs by hard links (HEX is
                                           its bundle.json's sha256), handed to the installer

A blob is fetched only when the store lacks it, so an update that keeps the weights fetches
only the files that changed. A `.partial` file left by a killed follower is resumed with a
ranged GET (`Range: bytes=SIZE-`); a registry that answers with the whole blob restarts it.
Nothing becomes a blob before its size and sha256 are what the signed `bundle.json` says: a
mismatch deletes the partial file and refuses (`BlobRefused`). Before a byte is fetched, what
is missing must fit the budget (the store's own cap, and the file system's free space less a
reserve), or the poll is refused with what it needs (`DiskBudgetExceeded`).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import IO

from trt_edge_runner.agent.errors import AgentError, InstallRefused
from trt_edge_runner.durable import fsync_dir, write_atomic
from trt_edge_runner.follow.artifact import Blob

PARTIAL = ".partial"
TAMPERED_HINT = "the registry's copy is damaged or was tampered with: publish the bundle again"
_BLOCK = 1 << 20
MIB = 1 << 20

# Open a blob stream from an offset: (the offset actually resumed at, the chunks).
OpenBlob = Callable[[str, int], AbstractContextManager[tuple[int, Iterator[bytes]]]]


class BlobRefused(InstallRefused):
    """A blob whose bytes are not what the signed bundle.json lists (size or sha256)."""


class DiskBudgetExceeded(AgentError):
    """What a poll would fetch does not fit the disk budget; nothing was fetched."""


@dataclass
class FetchCounters:
    """What one poll moved: bytes received over the network, blobs fetched and reused."""

    bytes_fetched: int = 0
    blobs_fetched: int = 0
    blobs_reused: int = 0
    resumed_from: dict[str, int] = field(default_factory=dict)  # digest -> bytes kept


@dataclass(frozen=True)
class Budget:
    """The store's cap (None: no cap) and the free space kept on its file system."""

    max_store_bytes: int | None = None
    reserve_bytes: int = 64 * MIB


class BlobStore:
    def __init__(self, root: Path, *, max_rate: int | None = None) -> None:
        self.root = root
        self.blob_dir = root / "blobs" / "sha256"
        self.bundle_dir = root / "bundles"
        self.max_rate = max_rate  # bytes per second; None: as fast as the link goes

    def path(self, blob: Blob) -> Path:
        return self.blob_dir / blob.hex

    def partial(self, blob: Blob) -> Path:
        return self.blob_dir / f"{blob.hex}{PARTIAL}"

    def has(self, blob: Blob) -> bool:
        try:
            return self.path(blob).stat().st_size == blob.size
        except FileNotFoundError:
            return False

    def stored_bytes(self) -> int:
        if not self.blob_dir.is_dir():
            return 0
        return sum(entry.stat().st_size for entry in os.scandir(self.blob_dir) if entry.is_file())

    # ---- the budget --------------------------------------------------------------------
    def check_budget(self, missing: Iterable[Blob], budget: Budget) -> None:
        """Refuse before fetching when what is missing (less what partial files hold) does not
        fit the store's cap or the file system's free space less the reserve."""
        needed = sum(blob.size - self._partial_size(blob) for blob in missing)
        if not needed:
            return
        self.blob_dir.mkdir(parents=True, exist_ok=True)
        free = shutil.disk_usage(self.blob_dir).free - budget.reserve_bytes
        if needed > free:
            raise DiskBudgetExceeded(
                f"{self.blob_dir}: the update needs {_mib(needed)} and the file system has "
                f"{_mib(max(free, 0))} free beyond its {_mib(budget.reserve_bytes)} reserve; "
                "nothing was fetched",
                hint="free space on the device, or lower --disk-reserve-mib",
            )
        cap = budget.max_store_bytes
        if cap is not None and self.stored_bytes() + needed > cap:
            raise DiskBudgetExceeded(
                f"{self.blob_dir}: the update needs {_mib(needed)}, the blob store holds "
                f"{_mib(self.stored_bytes())} of its {_mib(cap)} budget; nothing was fetched",
                hint="raise --disk-budget-mib (the store is pruned to the installed bundles "
                "after each install)",
            )

    def _partial_size(self, blob: Blob) -> int:
        try:
            return min(self.partial(blob).stat().st_size, blob.size)
        except FileNotFoundError:
            return 0

    # ---- fetching ----------------------------------------------------------------------
    def fetch(self, blob: Blob, open_blob: OpenBlob, counters: FetchCounters) -> Path:
        """The checked blob on disk, fetched (or resumed) unless the store has it."""
        if self.has(blob):
            counters.blobs_reused += 1
            return self.path(blob)
        self.blob_dir.mkdir(parents=True, exist_ok=True)
        partial = self.partial(blob)
        have = self._partial_size(blob)
        if have:
            counters.resumed_from[blob.digest] = have
        with open_blob(blob.digest, have) as (offset, chunks):
            mode = "ab" if offset == have and have else "wb"
            with partial.open(mode) as out:
                self._copy(chunks, out, limit=blob.size - offset, counters=counters)
                out.flush()
                os.fsync(out.fileno())
        self._check(blob, partial)
        os.replace(partial, self.path(blob))
        fsync_dir(self.blob_dir)
        counters.blobs_fetched += 1
        return self.path(blob)

    def _copy(
        self, chunks: Iterator[bytes], out: IO[bytes], *, limit: int, counters: FetchCounters
    ) -> None:
        """Write at most `limit` bytes (more means the blob is not what bundle.json says),
        paced to `max_rate`."""
        started, sent = time.monotonic(), 0
        for chunk in chunks:
            if sent + len(chunk) > limit:
                chunk = chunk[: limit - sent + 1]  # one byte over: the size check refuses it
            out.write(chunk)
            sent += len(chunk)
            counters.bytes_fetched += len(chunk)
            if sent > limit:
                return
            if self.max_rate:
                ahead = sent / self.max_rate - (time.monotonic() - started)
                if ahead > 0:
                    time.sleep(ahead)

    def _check(self, blob: Blob, partial: Path) -> None:
        size = partial.stat().st_size
        if size != blob.size:
            partial.unlink()
            raise BlobRefused(
                f"{blob.path}: the registry's blob {blob.digest[:19]}… has {size} bytes, the "
                f"signed bundle.json lists {blob.size}; refused, nothing installed",
                hint=TAMPERED_HINT,
            )
        sha = hashlib.sha256()
        with partial.open("rb") as handle:
            for block in iter(lambda: handle.read(_BLOCK), b""):
                sha.update(block)
        if sha.hexdigest() != blob.hex:
            partial.unlink()
            raise BlobRefused(
                f"{blob.path}: the registry's blob {blob.digest[:19]}… has sha256 "
                f"{sha.hexdigest()[:16]}…, not the digest the signed bundle.json lists; "
                "refused, nothing installed",
                hint=TAMPERED_HINT,
            )

    # ---- assembling and pruning ---------------------------------------------------------
    def assemble(self, name: str, files: Iterable[Blob], documents: dict[str, bytes]) -> Path:
        """A bundle directory of hard links to checked blobs, plus `documents` (bundle.json,
        bundle.sig): what `install_bundle` is given. Rebuilt from scratch each time."""
        target = self.bundle_dir / name
        if target.exists():
            shutil.rmtree(target)
        target.mkdir(parents=True)
        for blob in files:
            dest = target.joinpath(*PurePosixPath(blob.path).parts)
            dest.parent.mkdir(parents=True, exist_ok=True)
            os.link(self.path(blob), dest)
        for rel, data in documents.items():
            write_atomic(target / rel, data)
        return target

    def drop_bundle(self, name: str) -> None:
        shutil.rmtree(self.bundle_dir / name, ignore_errors=True)

    def prune(self, keep: set[str]) -> int:
        """Delete whole blobs whose hex digest is not in `keep` (the installed slots' files);
        partial downloads stay, to be resumed. Returns the bytes freed."""
        freed = 0
        if not self.blob_dir.is_dir():
            return 0
        for entry in os.scandir(self.blob_dir):
            if entry.name.endswith(PARTIAL) or entry.name in keep:
                continue
            freed += entry.stat().st_size
            os.unlink(entry.path)
        return freed


def _mib(n: int) -> str:
    return f"{n / MIB:.1f} MiB"
