"""Content-addressed stage cache: a stage's output stored under the hash of its inputs.

Layout: `<cache>/<stage>/<key[:2]>/<key>/` holding the stage's files and
`digest.json` (sha256 of every file). An entry is written in a temp dir and
renamed into place, so readers never see half an entry; on read every file is
re-hashed, and an entry that does not match (truncated, edited, bit rot) is
reported, deleted and rebuilt — never used.

Every entry the build writes also holds `origin.json`: the id of the environment that
computed it (`trt_edge.pipeline.environment`), covered by the digest like any file. The
environment is part of every key too, so a hit was computed where the build runs now;
`bundle.json` reports the origin read from the entry, per stage, not an assumption.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from trt_edge_runner.bundle_format import canonical_json

from trt_edge import settings

DIGEST_FILE = "digest.json"
ORIGIN_FILE = "origin.json"


def default_cache_dir() -> Path:
    """`$TRT_EDGE_CACHE`, else the user's cache folder (`trt_edge.settings`)."""
    return settings.resolve().cache_dir.value


def cache_key(**parts: Any) -> str:
    """sha256 of the canonical JSON of the named parts: order-free, stable across runs."""
    return hashlib.sha256(canonical_json(parts)).hexdigest()


def origin_entry(environment_id: str) -> dict[str, bytes]:
    """The `origin.json` file a computed stage stores beside its outputs."""
    return {ORIGIN_FILE: canonical_json({"computed_in": environment_id})}


def read_origin(files: dict[str, bytes]) -> str | None:
    """The id of the environment that computed a cache entry (None: the entry has no
    origin, or an unreadable one; the caller then does not claim to know)."""
    try:
        value = json.loads(files[ORIGIN_FILE])["computed_in"]
    except (KeyError, ValueError, TypeError):
        return None
    return value if isinstance(value, str) else None


class StageCache:
    """`get`/`put` of named files per (stage, key). `enabled=False` never reads but still writes."""

    def __init__(
        self,
        root: Path,
        *,
        enabled: bool = True,
        on_event: Callable[[str, dict[str, Any]], None] | None = None,
    ) -> None:
        self.root = root
        self.enabled = enabled
        self._on_event = on_event

    def _event(self, name: str, **fields: Any) -> None:
        if self._on_event is not None:
            self._on_event(name, fields)

    @contextmanager
    def scratch_dir(self) -> Iterator[Path]:
        """A temporary directory beside the entries (same file system: `put` then moves a
        file written there by renaming it); removed with whatever is left in it."""
        self.root.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix=".scratch-", dir=self.root) as tmp:
            yield Path(tmp)

    def entry_dir(self, stage: str, key: str) -> Path:
        return self.root / stage / key[:2] / key

    def get(self, stage: str, key: str) -> dict[str, bytes] | None:
        if not self.enabled:
            return None
        entry = self.entry_dir(stage, key)
        if not entry.is_dir():
            return None
        try:
            digests = json.loads((entry / DIGEST_FILE).read_text(encoding="utf-8"))["files"]
            files = {name: (entry / name).read_bytes() for name in digests}
            bad = [n for n, data in files.items() if hashlib.sha256(data).hexdigest() != digests[n]]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            bad = [f"{DIGEST_FILE} ({type(exc).__name__})"]
        if bad:
            self._event("cache_corrupted", stage=stage, key=key, files=bad, path=str(entry))
            shutil.rmtree(entry, ignore_errors=True)
            return None
        self._event("cache_hit", stage=stage, key=key)
        return files

    def put(self, stage: str, key: str, files: Mapping[str, bytes | Path]) -> None:
        """Store `files` under the key. A `Path` value is a file already written (e.g. by
        `scratch_dir`): it is moved in, not read, so a program the size of the weights
        never has to be held in memory for the cache."""
        entry = self.entry_dir(stage, key)
        try:
            entry.parent.mkdir(parents=True, exist_ok=True)
            tmp = Path(tempfile.mkdtemp(prefix=f".{key[:12]}-", dir=entry.parent))
        except OSError as exc:
            self._event("cache_write_failed", stage=stage, key=key, error=str(exc))
            return
        try:
            digests: dict[str, str] = {}
            for name, data in files.items():
                (tmp / name).parent.mkdir(parents=True, exist_ok=True)  # `ptd/x`, `llm/x`
                if isinstance(data, Path):
                    shutil.move(data, tmp / name)
                    with open(tmp / name, "rb") as fh:
                        digests[name] = hashlib.file_digest(fh, "sha256").hexdigest()
                else:
                    (tmp / name).write_bytes(data)
                    digests[name] = hashlib.sha256(data).hexdigest()
            (tmp / DIGEST_FILE).write_bytes(canonical_json({"files": digests}))
            if entry.exists():
                shutil.rmtree(entry, ignore_errors=True)
            os.replace(tmp, entry)
        except OSError as exc:
            # A cache that cannot be written only costs time; the build goes on.
            self._event("cache_write_failed", stage=stage, key=key, error=str(exc))
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)
