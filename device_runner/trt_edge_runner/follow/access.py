"""How to reach a registry, as the command lines spell it: `--credentials`, `--ca-file`,
`--plain-http` (the device's `follow`, the host's `publish` and `promote` take the same)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Access:
    """Plain http on purpose (loopback registries always may), a CA bundle, a credentials file."""

    plain_http: bool = False
    ca_file: Path | None = None
    credentials: Path | None = None


def add_registry_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--credentials",
        type=Path,
        default=None,
        help="JSON file with {username, password} or {token} for the registry",
    )
    parser.add_argument(
        "--ca-file", type=Path, default=None, help="CA bundle to verify the registry's TLS with"
    )
    parser.add_argument(
        "--plain-http",
        action="store_true",
        help="talk plain http to a registry that is not on loopback (loopback always may)",
    )


def access_from(args: argparse.Namespace) -> Access:
    return Access(args.plain_http, args.ca_file, args.credentials)
