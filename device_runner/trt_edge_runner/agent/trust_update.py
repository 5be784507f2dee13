"""`trust add`: accept rotation statements and revocation lists into the device's state.

All or nothing: the documents are checked in the order given, each against the trust
the ones before it established (a rotation, then a list signed by the new key), and
only when every one is accepted (or was already) does one atomic `state.json`
replacement record them, each with an event in the history. A refused document
changes nothing, and the refusal names the file, the key id and why.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from trt_edge_runner.agent.errors import AgentConfigError
from trt_edge_runner.agent.store import AgentState, DeviceStore, Event
from trt_edge_runner.trust import (
    MAX_TRUST_DOCUMENT_BYTES,
    TrustStore,
    load_trust_store,
    now_utc,
    parse_trust_document,
)


@dataclass(frozen=True)
class Accepted:
    path: Path
    outcome: str  # what changed, or "... already accepted"
    changed: bool


def read_trust_document(path: Path) -> bytes:
    try:
        with path.open("rb") as handle:
            return handle.read(MAX_TRUST_DOCUMENT_BYTES + 1)
    except OSError as exc:
        raise AgentConfigError(f"{path}: cannot read trust document: {exc.strerror}") from None


def accept_trust_documents(store: DeviceStore, keys_dir: Path, paths: list[Path]) -> list[Accepted]:
    """Accept every document of `paths` (in order) or none; what each one changed."""
    outcomes: list[Accepted] = []
    with store.locked():
        store.recover()
        state = store.load()
        for path in paths:
            document = parse_trust_document(read_trust_document(path), str(path))
            trust = load_trust_store(keys_dir, state.trust)
            record, outcome = trust.accept(document, str(path))
            changed = record != state.trust
            if changed:
                state = replace(state, trust=record).with_event(
                    Event(now_utc().isoformat(), "trust", f"{path.name}: {outcome}")
                )
            outcomes.append(Accepted(path, outcome, changed))
        if any(o.changed for o in outcomes):
            store.save(state)
    return outcomes


def current_trust(store: DeviceStore, keys_dir: Path) -> tuple[AgentState, TrustStore]:
    """The state (read only; nothing is created) and the trust store built from it."""
    state = store.load() if store.exists() else AgentState()
    return state, load_trust_store(keys_dir, state.trust)
