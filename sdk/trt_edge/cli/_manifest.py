"""The manifest argument of `validate`, `profiles`, `build` and `lock`, and the one rule for
a manifest that cannot be read.

A manifest that cannot be read at all (missing, a directory, not UTF-8) is bad
input for every command: exit 2, raised as `ManifestIOError`. What happens to
a manifest that was read but has errors depends on the job: `validate` and
`profiles` exist to find them (exit 1, the job ran and found problems); `build`
needs a valid manifest to start (exit 2, `ManifestInvalidError`).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from trt_edge_runner.errors import UsageError, Where

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


def require_manifest_file(manifest: Path) -> Path:
    """`manifest` if it is a file; a directory or a missing path is bad input, with a hint."""
    if manifest.is_dir():
        inside = manifest / "manifest.yaml"
        raise UsageError(
            "is a directory",
            where=Where(manifest),
            hint=f"did you mean {inside}?"
            if inside.is_file()
            else f"pass {inside} (the manifest file itself)",
        )
    if not manifest.is_file():
        raise UsageError("no such manifest file", where=Where(manifest))
    return manifest
