"""`trt-edge-device trust add FILE... | status`: the keys this device trusts, and how they change.

`add` accepts rotation statements (`trt-edge keys rotate`) and revocation lists
(`trt-edge keys revoke`), each verified against the keys trusted now, all or none;
`status` lists every key the device knows with its status (trusted, retired, expired,
revoked) and the revocation list version. Anchors are the `.pub` files of the keys
directory; `KEYS/keys.json` is the operator's local policy (not-after dates, revocations).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from trt_edge_runner.agent.config import add_location_arguments
from trt_edge_runner.agent.store import DeviceStore
from trt_edge_runner.agent.trust_update import accept_trust_documents, current_trust
from trt_edge_runner.cli_args import add_json_argument, require_file
from trt_edge_runner.cli_shell import Command


def add_add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("documents", metavar="FILE", type=Path, nargs="+")
    add_json_argument(parser)
    add_location_arguments(parser)


def add(args: argparse.Namespace) -> int:
    for path in args.documents:
        require_file(path, "trust document")
    outcomes = accept_trust_documents(DeviceStore(args.root), args.keys, list(args.documents))
    if args.json:
        doc = {
            "ok": True,
            "accepted": [
                {"file": str(o.path), "outcome": o.outcome, "changed": o.changed} for o in outcomes
            ],
        }
        print(json.dumps(doc, sort_keys=True))
    else:
        for outcome in outcomes:
            print(f"{outcome.path}: {outcome.outcome}")
    return 0


def add_status_arguments(parser: argparse.ArgumentParser) -> None:
    add_json_argument(parser)
    add_location_arguments(parser)


def status(args: argparse.Namespace) -> int:
    state, trust = current_trust(DeviceStore(args.root), args.keys)
    keys = trust.describe()
    if args.json:
        doc = {
            "keys": keys,
            "revocations_version": state.trust.revocations_version,
            "keys_dir": str(args.keys),
        }
        print(json.dumps(doc, sort_keys=True))
        return 0
    print(f"keys dir: {args.keys}; revocation list version {state.trust.revocations_version}")
    for row in keys:
        until = f", not after {row['not_after']}" if row["not_after"] else ""
        print(f"{row['key_id']}  {row['status']:<8} {row['origin'] or ''}{until}")
        if row["status"] != "trusted":
            print(f"    {row['reason']}")
    return 0


COMMAND = Command(
    "the keys this device trusts: accept rotations and revocation lists, show status",
    actions={
        "add": Command(
            "accept rotation statements and revocation lists (all or none)",
            add_arguments=add_add_arguments,
            run=add,
        ),
        "status": Command(
            "every key this device knows and its status",
            add_arguments=add_status_arguments,
            run=status,
        ),
    },
)
