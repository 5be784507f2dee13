"""`trt-edge sign BUNDLE --key KEY`: write BUNDLE/bundle.sig over the canonical bundle.json.

Check that every file of BUNDLE matches bundle.json, then write bundle.sig: an
ed25519 signature over the canonical bundle.json, which hashes every file.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from trt_edge_runner.cli_args import add_bundle_argument
from trt_edge_runner.cli_shell import Command

from trt_edge.signing import sign_bundle


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_bundle_argument(parser)
    parser.add_argument("--key", required=True, type=Path, help="private key (NAME.key)")


def run(args: argparse.Namespace) -> int:
    signature = sign_bundle(args.bundle, args.key)
    print(f"signed {args.bundle} with key {signature.key_id[:16]}… -> {args.bundle}/bundle.sig")
    return 0


COMMAND = Command(
    "sign a bundle directory with an ed25519 key", add_arguments=add_arguments, run=run
)
