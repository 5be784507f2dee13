"""`trt-edge lock MANIFEST [--builder IMAGE | --target T --backend B] [--check]`.

Lock a manifest's `model.requirements` for container builds: resolve them with this
host's pip (its index, wheel folders, proxy and CA) for the builder image a
`trt-edge build --container` runs in, and write `<manifest>.<builder>.lock` beside the
manifest — every wheel of their closure that the builder image does not already have,
pinned with its sha256. Check the lock in: a container build installs exactly it, with
the network off, into a derived builder image, and refuses a missing or stale lock.

The builder is the one the build would choose (the manifest's first target and its
backend, or `--target`/`--backend`); `--builder` names one (e.g. `cpu`). `--check`
writes nothing and exits 1 when the lock is missing or stale (for CI). Exit codes: 0
written (or current), 1 stale with `--check`, or pip failed on the host; 2 bad input
(the manifest, no requirements, an unknown builder).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from trt_edge_runner.cli_shell import Command

from trt_edge.cli._manifest import add_manifest_argument, require_manifest_file
from trt_edge.containers import catalog
from trt_edge.containers.requirements_lock import RequirementsLockError, check_lock, generate_lock
from trt_edge.targets import load_catalog

if TYPE_CHECKING:
    from trt_edge.manifest.resolved import ResolvedManifest


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_manifest_argument(parser)
    parser.add_argument("--builder", metavar="IMAGE", help="builder image name (e.g. cpu)")
    parser.add_argument("--target", help="target id (default: the manifest's first target)")
    parser.add_argument(
        "--backend",
        choices=("auto", "xnnpack", "portable", "tensorrt"),
        help="the build's backend (default: the manifest's), which decides the builder",
    )
    parser.add_argument(
        "--check", action="store_true", help="only check that the lock is current (exit 1 if not)"
    )


def _progress(line: str) -> None:
    print(f"  {line}", file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> int:
    from trt_edge.pipeline.run import load

    manifest = load(require_manifest_file(Path(args.manifest)))
    if not manifest.requirements:
        raise RequirementsLockError(
            f"{manifest.source_path}: the manifest has no model.requirements: nothing to lock"
        )
    spec = catalog.load_spec(args.builder or _chosen_builder(manifest, args))
    if args.check:
        try:
            lock = check_lock(manifest, spec)
        except RequirementsLockError as err:
            err.exit_code = 1  # checking ran and found the lock not current
            raise
        print(f"{lock.path}: current ({len(lock.entries)} pins, sha256 {lock.sha256()})")
        return 0
    lock = generate_lock(manifest, spec, progress=_progress)
    print(
        f"{lock.path}: {len(lock.entries)} pins over the {spec.name} builder, "
        f"lock sha256 {lock.sha256()}"
    )
    return 0


def _chosen_builder(manifest: ResolvedManifest, args: argparse.Namespace) -> str:
    """The builder image `trt-edge build --container` would run this manifest in (the
    choice asks whether this host has a GPU, as the build does)."""
    from trt_edge.containers.build_mode import DEFAULT_TARGET, choose_builder_for

    target_id = args.target or (manifest.targets[0] if manifest.targets else DEFAULT_TARGET)
    target = load_catalog().get(target_id)  # an unknown id: UnknownTargetError, exit 2
    return choose_builder_for(target, args.backend or manifest.backend).image


COMMAND = Command(
    "lock a manifest's model.requirements for container builds (MANIFEST.BUILDER.lock)",
    add_arguments=add_arguments,
    run=run,
)
