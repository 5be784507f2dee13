"""`trt-edge pack BUNDLE -o FILE.tar`: the transport tar that install, rollout and flash take.

Check BUNDLE as a device would (every file matches bundle.json, nothing extra, a
version devices can order, a bundle.sig unless --unsigned; --pubkey also verifies
the signature), then write it as a deterministic tar (sorted entries, fixed owner,
modes and mtimes: same bundle, same bytes), atomically.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from trt_edge_runner.cli_args import add_bundle_argument, require_dir
from trt_edge_runner.cli_shell import Command
from trt_edge_runner.durable import unwritable
from trt_edge_runner.errors import UsageError, Where

from trt_edge.signing.pack import pack_bundle


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_bundle_argument(parser, help="bundle directory (signed with `trt-edge sign`)")
    parser.add_argument(
        "-o", "--output", required=True, type=Path, metavar="FILE.tar", help="tar to write"
    )
    parser.add_argument(
        "--unsigned", action="store_true", help="pack a bundle that has no bundle.sig"
    )
    parser.add_argument(
        "--pubkey", type=Path, default=None, help="also verify the signature against this key"
    )


def run(args: argparse.Namespace) -> int:
    require_dir(args.bundle, "bundle directory")
    problem = unwritable(args.output)
    if problem is not None:
        raise UsageError(
            f"cannot write the tar there ({problem.describe()})",
            where=Where(args.output, option="-o"),
        )
    result = pack_bundle(args.bundle, args.output, unsigned=args.unsigned, pubkey=args.pubkey)
    signed = f"signed by key {result.signature.key_id[:16]}…" if result.signature else "unsigned"
    size = result.tar.stat().st_size
    print(
        f"packed {result.manifest.name} {result.manifest.version} ({signed}) -> "
        f"{result.tar} ({size} bytes)"
    )
    return 0


COMMAND = Command(
    "write a bundle as the deterministic transport .tar (devices, rollouts, flash)",
    add_arguments=add_arguments,
    run=run,
)
