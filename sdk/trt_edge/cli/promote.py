"""`trt-edge promote REGISTRY/REPO:VERSION CHANNEL`: move a channel's tag to a version.

Read the manifest the version's tag names (it must be a trt-edge bundle) and put the same
bytes under CHANNEL's tag: the channel's digest becomes the version's, and every device
following it (`trt-edge-device follow REGISTRY/REPO:CHANNEL`) installs it on its next poll.
Promoting an older version is allowed here; devices refuse it below their floor
(anti-rollback).
"""

from __future__ import annotations

import argparse

from trt_edge_runner.cli_shell import Command
from trt_edge_runner.follow.access import access_from, add_registry_arguments
from trt_edge_runner.follow.reference import check_tag, parse_reference

from trt_edge.publish.push import promote


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("reference", metavar="REGISTRY/REPO:VERSION", help="a published version")
    parser.add_argument("channel", metavar="CHANNEL", help="the tag to move, e.g. stable")
    add_registry_arguments(parser)


def run(args: argparse.Namespace) -> int:
    reference = parse_reference(args.reference, "REGISTRY/REPO:VERSION")
    done = promote(reference, check_tag(args.channel, "channel"), access_from(args))
    was = f"was {done.previous_digest[:19]}…" if done.previous_digest else "a new channel"
    print(f"promoted {reference} -> {done.channel} ({done.digest[:19]}…; {was})")
    return 0


COMMAND = Command(
    "point a channel tag (stable, canary) at a published bundle version",
    add_arguments=add_arguments,
    run=run,
)
