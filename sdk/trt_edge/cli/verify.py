"""`trt-edge verify BUNDLE --pubkey PUB`: the same check a device makes before installing.

Refuse BUNDLE unless PUB signed its bundle.json and every file matches it: a
changed byte, a missing or extra file, a link or another key is reported (exit 1).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from trt_edge_runner.cli_args import add_bundle_argument
from trt_edge_runner.cli_shell import Command

from trt_edge.signing import verify_bundle_with


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_bundle_argument(parser)
    parser.add_argument("--pubkey", required=True, type=Path, help="public key (NAME.pub)")


def run(args: argparse.Namespace) -> int:
    manifest = verify_bundle_with(args.bundle, args.pubkey)
    print(
        f"OK: {manifest.name} {manifest.version}: signature valid, "
        f"{len(manifest.files)} files match bundle.json"
    )
    return 0


COMMAND = Command(
    "verify a bundle's signature and every file's hash", add_arguments=add_arguments, run=run
)
