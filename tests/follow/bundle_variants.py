"""Signed variants of a bundle directory for the publish/follow tests and the pull benchmark:
the same files with a new version, and one file added or replaced (a tokenizer, a policy, a
large asset), re-signed through `trt-edge sign`'s own checks."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from trt_edge.signing import sign_bundle
from trt_edge_runner.bundle_format import BUNDLE_JSON, BUNDLE_SIG, canonical_json, file_sha256


def variant(
    source: Path,
    dest: Path,
    version: str,
    key: Path,
    files: Mapping[str, bytes] | None = None,
    edit: Callable[[dict[str, Any]], None] | None = None,
) -> Path:
    """`source` copied to `dest` as `version`, with `files` (path -> bytes) written or replaced
    and listed in bundle.json, and bundle.json changed by `edit` (a runtime policy, say), then
    signed with `key`."""
    shutil.copytree(source, dest)
    (dest / BUNDLE_SIG).unlink(missing_ok=True)
    doc = json.loads((dest / BUNDLE_JSON).read_bytes())
    doc["model"]["version"] = version
    for rel, data in (files or {}).items():
        path = dest / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        doc["files"][rel] = {"sha256": file_sha256(path), "size": len(data)}
    if edit is not None:
        edit(doc)
    (dest / BUNDLE_JSON).write_bytes(canonical_json(doc))
    sign_bundle(dest, key)
    return dest
