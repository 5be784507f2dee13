"""The manifest argument of `validate`, `profiles` and `build`, and the one rule for a
manifest that cannot be read.

A manifest that cannot be read at all (missing, a directory, not UTF-8) is bad
input for every command: exit 2, raised as `ManifestIOError`. What happens to
a manifest that was read but has errors depends on the job: `validate` and
`profiles` exist to find them (exit 1, the job ran and found problems); `build`
needs a valid manifest to start (exit 2, `ManifestInvalidError`).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from trt_edge.manifest import LoadResult


def add_manifest_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("manifest", help="path to manifest.yaml")


def load_readable(path: str) -> LoadResult:
    """Every diagnostic of the manifest at `path`; raises `ManifestIOError` if unreadable."""
    from trt_edge.manifest import load_manifest
    from trt_edge.manifest.diagnostics import ManifestIOError

    result = load_manifest(path)
    if any(d.stage == "io" for d in result.errors):
        raise ManifestIOError(result.path, result.diagnostics)
    return result
