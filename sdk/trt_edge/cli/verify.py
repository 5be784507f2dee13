"""`trt-edge verify BUNDLE --pubkey PUB`: the same check a device makes before installing."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "verify",
        help="verify a bundle's signature and every file's hash",
        description=(
            "Refuse BUNDLE unless PUB signed its bundle.json and every file matches it: "
            "a changed byte, a missing or extra file, a link or another key is reported."
        ),
    )
    parser.add_argument("bundle", metavar="BUNDLE", type=Path, help="bundle directory")
    parser.add_argument("--pubkey", required=True, type=Path, help="public key (NAME.pub)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from trt_edge.signing import SigningError, verify_bundle_with

    try:
        manifest = verify_bundle_with(args.bundle, args.pubkey)
    except SigningError as exc:
        print(f"trt-edge verify: refused: {exc}", file=sys.stderr)
        return exc.exit_code
    print(
        f"OK: {manifest.name} {manifest.version}: signature valid, "
        f"{len(manifest.files)} files match bundle.json"
    )
    return 0
