"""The agent's on-disk layout and its single source of truth, `state.json`.

    ROOT/state.json        which slot is active, which one is the rollback target, what each
                           holds; per model the version floor (anti-rollback); a bounded
                           history; the trust documents this device accepted
    ROOT/slots/A, slots/B  verified bundle directories (A/B)
    ROOT/current           symlink to the active slot, for services that load "the model"
    ROOT/staging/          extraction scratch space; anything here after a crash is garbage
    ROOT/agent.lock        flock: one agent operation at a time

Only a `state.json` replacement (write, fsync, rename, fsync dir) changes which
model is active; every earlier step of an install touches only the inactive slot
and staging. So a SIGKILL or power cut at any point leaves the old or the new
state, whole, and `recover()` on the next start only deletes scratch and points
`current` at whatever `state.json` says. The version floor and the trust record
change in the same replacement as the slot they concern, so a crash can never
leave a device with a new model but an old floor, or the reverse.
"""

from __future__ import annotations

import fcntl
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from trt_edge_runner.agent.errors import AgentConfigError, AgentError
from trt_edge_runner.bundle_format import canonical_json
from trt_edge_runner.durable import fsync_dir, replace_symlink, write_atomic
from trt_edge_runner.json_documents import parse_json_object
from trt_edge_runner.schemas import validate
from trt_edge_runner.trust_record import TrustRecord
from trt_edge_runner.versions import VersionError, parse_version

SLOTS = ("A", "B")
STATE_SCHEMA = 3
# Schema 1 (no floors, history or trust record) is still read: its floors are derived
# from the versions its slots hold, so upgrading the agent never lowers a floor. Schema 2
# is schema 3 without the slots' `baseline_spread_ms` (its health judges without the
# spread term); a schema-2 agent refuses 3 by its number, not by an unknown key.
READABLE_SCHEMAS = (1, 2, 3)
# The history keeps the most recent events only: state.json stays a few KiB.
HISTORY_LIMIT = 64


@dataclass(frozen=True)
class SlotInfo:
    """What a slot holds: the bundle identity and the baseline latency measured at install."""

    name: str
    version: str
    bundle_sha256: str
    installed_at: str
    baseline_ms: dict[str, float] = field(default_factory=dict)  # per phase: the median
    # Id of the key whose signature was accepted at install (rollback refuses a revoked one).
    key_id: str | None = None
    # Per phase: the median absolute deviation of the install's timed runs (agent/latency.py).
    baseline_spread_ms: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Floor:
    """Anti-rollback: the highest version of one model this device has installed, and the
    sha256 of that version's `bundle.json` (same version, other content is refused)."""

    version: str
    bundle_sha256: str


@dataclass(frozen=True)
class Event:
    """One entry of the state's history: what the agent did that changed trust or the floor
    rule's outcome (installs, deliberate downgrades, rollbacks, trust documents)."""

    at: str
    action: str
    detail: str
    name: str | None = None
    version: str | None = None


def _floors_from_slots(slots: dict[str, SlotInfo | None]) -> dict[str, Floor]:
    """The floors a schema-1 state implies: per model, the highest version its slots hold."""
    floors: dict[str, Floor] = {}
    for info in slots.values():
        if info is None:
            continue
        try:
            version = parse_version(info.version)
        except VersionError:
            continue
        held = floors.get(info.name)
        if held is None or parse_version(held.version) < version:
            floors[info.name] = Floor(info.version, info.bundle_sha256)
    return floors


@dataclass(frozen=True)
class AgentState:
    active: str | None = None
    previous: str | None = None
    slots: dict[str, SlotInfo | None] = field(default_factory=lambda: dict.fromkeys(SLOTS))
    floors: dict[str, Floor] = field(default_factory=dict)
    history: tuple[Event, ...] = ()
    trust: TrustRecord = field(default_factory=TrustRecord)

    def inactive(self) -> str:
        """The slot an install writes: never the active one."""
        return "B" if self.active == "A" else "A"

    def info(self, slot: str | None) -> SlotInfo | None:
        return None if slot is None else self.slots.get(slot)

    def to_json(self) -> bytes:
        return canonical_json(
            {
                "schema": STATE_SCHEMA,
                "active": self.active,
                "previous": self.previous,
                "slots": {k: None if v is None else asdict(v) for k, v in self.slots.items()},
                "floors": {k: asdict(v) for k, v in sorted(self.floors.items())},
                "history": [asdict(e) for e in self.history],
                "trust": self.trust.to_dict(),
            }
        )

    def with_slot(self, slot: str, info: SlotInfo | None) -> AgentState:
        return replace(self, slots={**self.slots, slot: info})

    def with_event(self, event: Event) -> AgentState:
        """This state with `event` appended to its history (the oldest dropped past the limit)."""
        return replace(self, history=(*self.history, event)[-HISTORY_LIMIT:])


_EDITED_BY_HAND = (
    "it is only ever replaced atomically, so this file was edited by hand: restore it or reinstall"
)


def _state_error(message: str, field: str) -> AgentConfigError:
    return AgentConfigError(f"{message}; agent state is damaged", hint=_EDITED_BY_HAND)


def decode_state(data: bytes, source: str) -> AgentState:
    """`state.json` as an `AgentState`: the one reader of the file (the agent's commands, the
    service's hot swap and the flash all load it through `DeviceStore.load`). The version is
    checked first (a newer agent's document may have another shape), then the document is
    held to `agent-state.schema.json`; AgentConfigError naming the file and the field."""
    doc = parse_json_object(data, source, "agent state", lambda m: _state_error(m, ""))
    schema = doc.get("schema", 1)
    if isinstance(schema, bool) or schema not in READABLE_SCHEMAS:
        raise AgentConfigError(
            f"{source}: agent state schema {schema!r} is newer than this agent reads "
            f"({', '.join(map(str, READABLE_SCHEMAS))}); update trt-edge-runner"
        )
    validate("agent-state", doc, source, _state_error)
    slots = {
        slot: None if doc["slots"].get(slot) is None else SlotInfo(**doc["slots"][slot])
        for slot in SLOTS
    }
    if schema == 1:
        floors = _floors_from_slots(slots)
        history: tuple[Event, ...] = ()
        trust = TrustRecord()
    else:
        floors = {name: Floor(**raw) for name, raw in doc.get("floors", {}).items()}
        history = tuple(Event(**raw) for raw in doc.get("history", []))
        trust = TrustRecord.from_dict(doc.get("trust", {}))
    return AgentState(
        active=doc["active"],
        previous=doc["previous"],
        slots=slots,
        floors=floors,
        history=history,
        trust=trust,
    )


class DeviceStore:
    """The agent's directory; methods are the only way state changes."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.state_path = root / "state.json"
        self.slots_dir = root / "slots"
        self.staging_dir = root / "staging"
        self.current_link = root / "current"

    def slot_dir(self, slot: str) -> Path:
        return self.slots_dir / slot

    def _unusable(self, exc: OSError) -> AgentConfigError:
        return AgentConfigError(
            f"{self.root}: cannot use this as the agent state directory "
            f"({exc.strerror or exc}); pass --root (or set TRT_EDGE_ROOT) to a directory "
            "this user can write, or run the agent as the user that owns it"
        )

    def exists(self) -> bool:
        """Whether anything was ever installed here; read-only (status/health create nothing)."""
        try:
            if not self.root.exists():
                return False
        except OSError as exc:
            raise self._unusable(exc) from None
        if not self.root.is_dir():
            raise self._unusable(NotADirectoryError(20, "not a directory"))
        return True

    def ensure_layout(self) -> None:
        try:
            for directory in (self.root, self.slots_dir, self.staging_dir):
                directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise self._unusable(exc) from None

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Exclusive lock for one operation; the kernel drops it if the agent dies.

        An OSError inside the operation (a full disk, a file made unwritable
        under the agent) becomes an AgentError naming it, not a traceback.
        """
        self.ensure_layout()
        try:
            fd = os.open(self.root / "agent.lock", os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise self._unusable(exc) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        except OSError as exc:
            raise AgentError(f"{self.root}: the operation could not finish: {exc}") from None
        finally:
            os.close(fd)

    def load(self) -> AgentState:
        try:
            data = self.state_path.read_bytes()
        except FileNotFoundError:
            return AgentState()
        except OSError as exc:
            raise self._unusable(exc) from None
        return decode_state(data, str(self.state_path))

    def save(self, state: AgentState) -> None:
        """The commit point of every operation."""
        write_atomic(self.state_path, state.to_json())

    def link_current(self, state: AgentState) -> None:
        if state.active is None:
            if self.current_link.is_symlink():
                self.current_link.unlink()
                fsync_dir(self.root)
            return
        target = f"slots/{state.active}"
        if not self.current_link.is_symlink() or os.readlink(self.current_link) != target:
            replace_symlink(self.current_link, target)

    def recover(self) -> list[str]:
        """Bring the directory back in line with `state.json` after a crash; says what it did."""
        actions: list[str] = []
        self.ensure_layout()
        for leftover in sorted(self.staging_dir.iterdir()):
            shutil.rmtree(leftover) if leftover.is_dir() else leftover.unlink()
            actions.append(f"removed unfinished extraction {leftover.name}")
        for tmp in self.root.glob(".*.tmp-*"):
            tmp.unlink()
            actions.append(f"removed unfinished write {tmp.name}")
        state = self.load()
        for slot in SLOTS:
            unrecorded = state.slots.get(slot) is None and slot != state.active
            if unrecorded and self.slot_dir(slot).exists():
                shutil.rmtree(self.slot_dir(slot))
                actions.append(f"removed partial content of inactive slot {slot}")
        link_before = os.readlink(self.current_link) if self.current_link.is_symlink() else None
        self.link_current(state)
        link_after = os.readlink(self.current_link) if self.current_link.is_symlink() else None
        if link_before != link_after:
            actions.append(f"pointed current at {link_after}")
        return actions
