"""`trt-edge keys generate|rotate|revoke|id`: the ed25519 keys that sign bundles, and the
documents that move devices from one key to the next or stop them trusting one.

`generate` writes a key pair; `rotate --current OLD.key --new NEW` writes NEW.key, NEW.pub
and NEW.rotation.json (signed by OLD: a device that trusts OLD accepts NEW from it, and
by default retires OLD); `revoke KEY... --key SIGNER.key --list revocations.json` writes
the next version of the revocation list; `id` prints key ids. Devices take the documents
with `trt-edge-device trust add` (a rollout plan's `trust:` does that per device).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from trt_edge_runner.cli_args import require_file
from trt_edge_runner.cli_shell import Command

from trt_edge.signing import generate_keypair
from trt_edge.signing.trust_documents import (
    parse_not_after,
    resolve_key_id,
    revoke_keys,
    rotate_key,
)


def add_generate_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("directory", metavar="DIR", type=Path)
    parser.add_argument("--name", default="trt-edge-signing", help="file name stem")
    parser.add_argument("--force", action="store_true", help="replace an existing key pair")


def generate(args: argparse.Namespace) -> int:
    pair = generate_keypair(args.directory, name=args.name, force=args.force)
    print(f"private key: {pair.private_path} (keep secret; used by `trt-edge sign --key`)")
    print(f"public key:  {pair.public_path} (copy to each device's /etc/trt-edge/keys/)")
    print(f"key id:      {pair.key_id}")
    return 0


def _required_path(parser: argparse.ArgumentParser, option: str, metavar: str, what: str) -> None:
    """An option every run of the action needs: the key or document it reads or writes."""
    parser.add_argument(option, required=True, type=Path, metavar=metavar, help=what)


def add_rotate_arguments(parser: argparse.ArgumentParser) -> None:
    _required_path(parser, "--current", "OLD.key", "the key devices trust now")
    _required_path(
        parser,
        "--new",
        "NEW",
        "name stem of the new key: NEW.key, NEW.pub and NEW.rotation.json are written",
    )
    parser.add_argument(
        "--not-after",
        default=None,
        metavar="DATE",
        help="devices refuse the new key after this date (2027-12-31 or 2027-12-31T12:00:00Z)",
    )
    parser.add_argument(
        "--keep-old",
        action="store_true",
        help="do not retire the current key: devices keep accepting both (an overlap period)",
    )
    parser.add_argument("--force", action="store_true", help="replace existing NEW files")


def rotate(args: argparse.Namespace) -> int:
    require_file(args.current, "private key", option="--current")
    not_after = None if args.not_after is None else parse_not_after(args.not_after)
    result = rotate_key(
        args.current, args.new, not_after=not_after, retire_old=not args.keep_old, force=args.force
    )
    print(f"new private key:    {result.private_path} (sign bundles with it from now on)")
    print(f"new public key:     {result.public_path}")
    print(f"rotation statement: {result.statement_path} (signed by {result.old_key_id})")
    print(f"new key id:         {result.new_key_id}")
    retired = "retires" if result.retire_old else "keeps"
    print(
        f"devices that trust {result.old_key_id[:16]}… accept the new key once they have the "
        f"statement (`trt-edge-device trust add`, or a plan's `trust:`); it {retired} the old one"
    )
    return 0


def add_revoke_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "keys", metavar="KEY", nargs="+", help="key id (64 hex digits) or a .pub file"
    )
    _required_path(parser, "--key", "SIGNER.key", "a key devices trust")
    _required_path(
        parser,
        "--list",
        "revocations.json",
        "the revocation list: read (if it exists) and replaced by its next version",
    )
    parser.add_argument("--reason", default="revoked", help="why (kept on every device)")


def revoke(args: argparse.Namespace) -> int:
    require_file(args.key, "private key", option="--key")
    result = revoke_keys(args.key, args.list, list(args.keys), args.reason)
    print(
        f"revocation list {result.path} version {result.version} (signed by "
        f"{result.signer_key_id[:16]}…): {len(result.revoked)} key(s) revoked"
    )
    for kid in result.added:
        print(f"  newly revoked: {kid}")
    return 0


def add_id_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", metavar="KEYFILE", type=Path, nargs="+", help=".pub or .key")


def show_id(args: argparse.Namespace) -> int:
    for path in args.files:
        require_file(path, "key file")
        print(f"{resolve_key_id(str(path))}  {path}")
    return 0


COMMAND = Command(
    "manage bundle signing keys: generate, rotate, revoke",
    actions={
        "generate": Command(
            "write NAME.key (private, 0600) and NAME.pub (copy to devices) into DIR",
            add_arguments=add_generate_arguments,
            run=generate,
        ),
        "rotate": Command(
            "make the next key and a rotation statement signed by the current one",
            add_arguments=add_rotate_arguments,
            run=rotate,
        ),
        "revoke": Command(
            "write the next version of the signed revocation list",
            add_arguments=add_revoke_arguments,
            run=revoke,
        ),
        "id": Command(
            "print the key id (sha256 of the raw public key) of .pub/.key files",
            add_arguments=add_id_arguments,
            run=show_id,
        ),
    },
)
