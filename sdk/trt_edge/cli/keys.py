"""`trt-edge keys generate DIR`: create an ed25519 signing key pair for bundles.

Manage the ed25519 keys that sign bundles and that devices trust.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from trt_edge_runner.cli_shell import Command


def add_generate_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("directory", metavar="DIR", type=Path)
    parser.add_argument("--name", default="trt-edge-signing", help="file name stem")
    parser.add_argument("--force", action="store_true", help="replace an existing key pair")


def generate(args: argparse.Namespace) -> int:
    from trt_edge.signing import generate_keypair

    pair = generate_keypair(args.directory, name=args.name, force=args.force)
    print(f"private key: {pair.private_path} (keep secret; used by `trt-edge sign --key`)")
    print(f"public key:  {pair.public_path} (copy to each device's /etc/trt-edge/keys/)")
    print(f"key id:      {pair.key_id}")
    return 0


COMMAND = Command(
    "manage bundle signing keys",
    actions={
        "generate": Command(
            "write NAME.key (private, 0600) and NAME.pub (copy to devices) into DIR",
            add_arguments=add_generate_arguments,
            run=generate,
        ),
    },
)
