"""`trt-edge keys generate DIR`: create an ed25519 signing key pair for bundles."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "keys",
        help="manage bundle signing keys",
        description="Manage the ed25519 keys that sign bundles and that devices trust.",
    )
    actions = parser.add_subparsers(dest="keys_action", metavar="ACTION", required=True)
    generate = actions.add_parser(
        "generate",
        help="write NAME.key (private, 0600) and NAME.pub (copy to devices) into DIR",
    )
    generate.add_argument("directory", metavar="DIR", type=Path)
    generate.add_argument("--name", default="trt-edge-signing", help="file name stem")
    generate.add_argument("--force", action="store_true", help="replace an existing key pair")
    generate.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from trt_edge.signing import SigningError, generate_keypair

    try:
        pair = generate_keypair(args.directory, name=args.name, force=args.force)
    except SigningError as exc:
        print(f"trt-edge keys: error: {exc}", file=sys.stderr)
        return exc.exit_code
    print(f"private key: {pair.private_path} (keep secret; used by `trt-edge sign --key`)")
    print(f"public key:  {pair.public_path} (copy to each device's /etc/trt-edge/keys/)")
    print(f"key id:      {pair.key_id}")
    return 0
