"""`trt-edge sign BUNDLE --key KEY`: write BUNDLE/bundle.sig over the canonical bundle.json."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "sign",
        help="sign a bundle directory with an ed25519 key",
        description=(
            "Check that every file of BUNDLE matches bundle.json, then write bundle.sig: "
            "an ed25519 signature over the canonical bundle.json, which hashes every file."
        ),
    )
    parser.add_argument("bundle", metavar="BUNDLE", type=Path, help="bundle directory")
    parser.add_argument("--key", required=True, type=Path, help="private key (NAME.key)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from trt_edge.signing import SigningError, sign_bundle

    try:
        signature = sign_bundle(args.bundle, args.key)
    except SigningError as exc:
        print(f"trt-edge sign: error: {exc}", file=sys.stderr)
        return exc.exit_code
    print(f"signed {args.bundle} with key {signature.key_id[:16]}… -> {args.bundle}/bundle.sig")
    return 0
