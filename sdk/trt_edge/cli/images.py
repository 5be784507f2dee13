"""`trt-edge images build|list|base|lock`: the builder and device images.

- `build TARGET [--base IMAGE] [--tag T] [--force] [--no-cache]`: build `images/TARGET/`
  (an image name, e.g. `cpu`, or a catalog target id such as `cpu-x86_64`, which
  means that target's builder image). Reuses the existing image when nothing that
  decides it changed.
- `list [--json]`: our images present locally: image, role, lock hash, version, and
  whether each is current for this checkout.
- `base [--mirror URL]`: make the local Debian base (debootstrap + docker import; root).
- `dockerfile IMAGE`: print the Dockerfile the daemon builds for IMAGE (its own with
  the shared fragments of `images/_fragments/` written in).
- `lock IMAGE`: regenerate `images/IMAGE/lock.txt` from its `requirements.in` with the
  host's pip (exact versions + sha256).
- `prune`: remove our images that are stale for this checkout (not those in use).

Exit codes: 0 ok; 1 the daemon or a build failed; 2 bad input (unknown image, bad lock).
An error of the Docker SDK itself (the daemon refused a request) is reported as
a `ContainerError`, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys

from trt_edge_runner.cli_args import add_json_argument
from trt_edge_runner.cli_shell import AddArguments, Command, Run
from trt_edge_runner.errors import UsageError, Where

from trt_edge.containers import catalog
from trt_edge.containers.base_image import load_recipe, make_base
from trt_edge.containers.catalog import load_spec
from trt_edge.containers.daemon import connect, is_daemon_error
from trt_edge.containers.dockerfile import expand
from trt_edge.containers.errors import ContainerError
from trt_edge.containers.images import build_image
from trt_edge.containers.listing import list_images, prune_stale
from trt_edge.containers.wheelhouse import generate_lock
from trt_edge.targets import load_catalog

MIRROR_SCHEMES = ("http://", "https://", "file:/")  # what debootstrap fetches from


def add_build_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "target", help="image name (cpu, cpu-runtime, ...) or a target id (cpu-x86_64, ...)"
    )
    parser.add_argument("--base", metavar="IMAGE", help="base image (default: the image's own)")
    parser.add_argument("--tag", metavar="T", help="also tag the result as T")
    parser.add_argument("--force", action="store_true", help="rebuild even if current")
    parser.add_argument("--no-cache", action="store_true", help="build without the layer cache")
    parser.add_argument("--runtime", action="store_true", help="with a target id: its device image")


def add_base_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--mirror", metavar="URL", help="Debian mirror (e.g. a snapshot URL)")


def add_lock_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("image", help="image name")


def resolve_image_name(name: str, runtime: bool = False) -> str:
    """An image folder name, or a catalog target id mapped to its builder/runtime image."""
    if name in catalog.image_names():
        return name
    try:
        target = load_catalog().get(name)
    except KeyError:
        return name  # load_spec reports the unknown name with the known ones
    return target.runtime_image if runtime else target.builder_image


def _progress(line: str) -> None:
    print(f"  {line}", file=sys.stderr, flush=True)


def action(help: str, run: Run, add_arguments: AddArguments | None = None) -> Command:
    """An `images` action whose Docker SDK errors become a `ContainerError` (exit 1).

    Our own modules raise `ContainerError`s with a fix; this catches what the
    engine says in the middle of a request (an API refusal, a dropped socket).
    """

    def run_reporting_engine_errors(args: argparse.Namespace) -> int:
        try:
            return run(args)
        except Exception as err:
            if not is_daemon_error(err):
                raise
            raise ContainerError(f"the Docker engine failed: {err}") from err

    return Command(help, add_arguments=add_arguments, run=run_reporting_engine_errors)


def _build(args: argparse.Namespace) -> int:
    name = resolve_image_name(args.target, args.runtime)
    ref = build_image(
        name,
        base=args.base,
        tag=args.tag,
        force=args.force,
        no_cache=args.no_cache,
        progress=_progress,
    )
    state = "reused" if ref.reused else f"built in {ref.seconds:.0f} s"
    print(f"{ref.tag} ({ref.id[:19]}, {state}; lock {ref.lock_sha256[:12]})")
    return 0


def _list(args: argparse.Namespace) -> int:
    rows = list_images()
    if args.json:
        print(json.dumps([row.__dict__ for row in rows], indent=2, default=list))
        return 0
    if not rows:
        print("no trt-edge images here; build one with `trt-edge images build cpu`")
        return 0
    from rich.console import Console
    from rich.table import Table

    table = Table("image", "role", "tags", "lock", "version", "size", "current")
    for row in rows:
        table.add_row(
            row.name,
            row.role,
            "\n".join(row.tags) or row.id[:19],
            row.lock_sha256[:12],
            row.version,
            f"{row.size_bytes / 1e6:.0f} MB",
            "yes" if row.current else "stale",
        )
    Console(width=None if sys.stdout.isatty() else 160).print(table)
    return 0


def _base(args: argparse.Namespace) -> int:
    if args.mirror is not None and not args.mirror.startswith(MIRROR_SCHEMES):
        raise UsageError(
            "not a Debian mirror URL",
            where=Where(option="--mirror", value=args.mirror),
            hint="e.g. http://deb.debian.org/debian or a snapshot.debian.org URL",
        )
    recipe = load_recipe(mirror=args.mirror)
    tag = make_base(connect(), recipe, progress=_progress)
    print(tag)
    return 0


def _lock(args: argparse.Namespace) -> int:
    spec = load_spec(args.image)
    lock = generate_lock(spec, progress=_progress)
    print(f"{lock.path}: {len(lock.entries)} pins, lock sha256 {lock.sha256()}")
    return 0


def _dockerfile(args: argparse.Namespace) -> int:
    sys.stdout.write(expand(load_spec(resolve_image_name(args.image))).text)
    return 0


def _prune(args: argparse.Namespace) -> int:
    removed = prune_stale()
    for tag in removed:
        print(f"removed {tag}")
    print(f"{len(removed)} stale tag(s) removed")
    return 0


COMMAND = Command(
    "build and list the builder/device Docker images",
    description="Build and list trt-edge's builder and device images (images/<name>/).",
    actions={
        "build": action("build an image from images/<name>/", _build, add_build_arguments),
        "list": action("list trt-edge images present locally", _list, add_json_argument),
        "base": action(
            "make the local Debian base image (debootstrap; root)", _base, add_base_arguments
        ),
        "dockerfile": action(
            "print the expanded Dockerfile of images/<name>/", _dockerfile, add_lock_arguments
        ),
        "lock": action(
            "regenerate images/<name>/lock.txt with the host's pip", _lock, add_lock_arguments
        ),
        "prune": action("remove trt-edge images that are stale for this checkout", _prune),
    },
)
