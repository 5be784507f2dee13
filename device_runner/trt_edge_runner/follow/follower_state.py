"""The follower's record, `ROOT/follow/state.json` (schema `follower-state`).

What the last poll of the channel found (the manifest digest the tag pointed at), what it did
(`outcome`, `detail`), what it moved over the network (`bytes_fetched`, and the running
total), and how many polls in a row failed (`failures`, which sets the backoff). A refused
manifest's digest is kept so that the next polls do not fetch it again until the tag moves.
The agent's `state.json` stays the one source of truth for what is installed; this file is
the follower's memory and the operator's view of it. Written atomically.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal

from trt_edge_runner.agent.errors import AgentConfigError
from trt_edge_runner.durable import write_atomic
from trt_edge_runner.json_documents import parse_json_object
from trt_edge_runner.schemas import validate

FOLLOWER_STATE_SCHEMA = 1
Outcome = Literal["installed", "up_to_date", "held", "refused", "error"]


@dataclass(frozen=True)
class FollowerState:
    reference: str
    checked_at: str
    outcome: Outcome
    detail: str
    failures: int = 0
    bytes_fetched: int = 0
    bytes_fetched_total: int = 0
    blobs_fetched: int = 0
    blobs_reused: int = 0
    manifest_digest: str | None = None
    installed_digest: str | None = None  # the manifest last installed by this follower
    refused_digest: str | None = None  # a manifest refused: not fetched again until the tag moves

    def to_json(self) -> bytes:
        doc = {"schema": FOLLOWER_STATE_SCHEMA, **asdict(self)}
        return (json.dumps(doc, sort_keys=True, indent=2) + "\n").encode()


def _error(message: str, _field: str = "") -> AgentConfigError:
    return AgentConfigError(message, hint="delete the file: the next poll starts afresh")


def decode_follower_state(data: bytes, source: str) -> FollowerState:
    """`state.json` of the follower as a `FollowerState`: the one reader of the file."""
    doc = parse_json_object(data, source, "follower state", _error)
    validate("follower-state", doc, source, _error)
    fields = {k: v for k, v in doc.items() if k in FollowerState.__dataclass_fields__}
    return FollowerState(**fields)


def load_follower_state(path: Path) -> FollowerState | None:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise _error(f"{path}: cannot read the follower state: {exc.strerror}") from None
    return decode_follower_state(data, str(path))


def save_follower_state(path: Path, state: FollowerState) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, state.to_json())
