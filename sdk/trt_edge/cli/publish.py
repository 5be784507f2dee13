"""`trt-edge publish BUNDLE REGISTRY/REPO:TAG`: a signed bundle into an OCI registry.

Check BUNDLE as a device would (files as bundle.json lists them, an orderable version, a
bundle.sig), then push it as an OCI artifact (docs/fleet.md, "Fleets behind NAT"): one blob
per file, named by its sha256, so a file the registry already holds from an earlier version
is not uploaded again; bundle.json is the manifest's config, bundle.sig a layer. `--tag
CHANNEL` (repeatable) also points those tags at it. The client is ORAS's Python SDK, the
device's too (`trt_edge_runner.follow.registry`).
"""

from __future__ import annotations

import argparse

from trt_edge_runner.cli_args import add_bundle_argument, require_dir
from trt_edge_runner.cli_shell import Command
from trt_edge_runner.follow.access import access_from, add_registry_arguments
from trt_edge_runner.follow.reference import check_tag, parse_reference

from trt_edge.publish.push import publish_bundle


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_bundle_argument(parser, help="signed bundle directory (`trt-edge sign`)")
    parser.add_argument("reference", metavar="REGISTRY/REPO:TAG", help="where to push it")
    parser.add_argument(
        "--tag",
        action="append",
        default=[],
        metavar="CHANNEL",
        help="also point this tag at it (repeatable), e.g. --tag canary",
    )
    add_registry_arguments(parser)


def run(args: argparse.Namespace) -> int:
    require_dir(args.bundle, "bundle directory")
    reference = parse_reference(args.reference)
    also = tuple(check_tag(t, "--tag") for t in args.tag)
    done = publish_bundle(args.bundle, reference, access_from(args), also_tag=also)
    print(
        f"published {done.name} {done.version} -> {reference.registry}/{reference.repository} "
        f"tags {', '.join(done.tags)} ({done.digest[:19]}…): {done.blobs_uploaded} blob(s) "
        f"uploaded ({done.bytes_uploaded} bytes), {done.blobs_present} already there"
    )
    return 0


COMMAND = Command(
    "push a signed bundle to an OCI registry (one blob per file; --tag moves channels)",
    add_arguments=add_arguments,
    run=run,
)
