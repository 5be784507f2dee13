"""The install transaction: verified, fingerprint- and version-checked, extracted into the
inactive slot, smoke-tested, then made active by one atomic `state.json` replacement.

The version check is anti-rollback: per model the device keeps the highest version it
has installed (its floor, in `state.json`) and refuses a lower one, or the floor
version with other content (`check_floor`), unless told so (`allow_downgrade`).

Every step before `switch` writes only staging and the inactive slot, so a crash
there leaves the previous model active and runnable; `switch` is the commit
point; `link` (the `current` symlink) is redone by `recover()` if it was missed.
Steps are named (`STEPS`, and `ROLLBACK_STEPS` for rollback) so operators can read
where an operation stopped. Each step is a function over one transaction value
(`_Install`, `_Rollback`), listed in order in `_INSTALL` / `_ROLLBACK`, which
the constants are read from; one loop (`_run_steps`) runs them and reports each,
so a step cannot run unreported or be reported under another name. The archive is
extracted and verified in staging before the inactive slot is released, so a bad
archive changes nothing else at all.
Callables in `STEP_OBSERVERS` are called with each step's name as it completes;
nothing is registered in the shipped CLI. The crash-safety test registers one
from its own driver script to stop the agent there and SIGKILL it.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import uuid
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TypeVar

from trt_edge_runner.agent.bundle_directory import BundleDirectory, BundleSource
from trt_edge_runner.agent.config import DEFAULT_LATENCY_RUNS
from trt_edge_runner.agent.errors import AgentError, InstallRefused, NothingInstalled
from trt_edge_runner.agent.facts import fingerprint_mismatches
from trt_edge_runner.agent.memory_check import MemoryCheck
from trt_edge_runner.agent.smoke import PhaseExecutor, PhaseTiming, run_every_phase
from trt_edge_runner.agent.store import AgentState, DeviceStore, Event, Floor, SlotInfo
from trt_edge_runner.agent.tarball import open_bundle_tar
from trt_edge_runner.bundle_format import BUNDLE_JSON, BUNDLE_SIG, BundleManifest
from trt_edge_runner.bundle_integrity import BundleProblemsError, refuse, verify_directory
from trt_edge_runner.errors import RunnerError
from trt_edge_runner.signature import (
    DetachedSignature,
    SignatureError,
    parse_canonical_manifest,
    read_canonical_manifest,
    read_signature,
)
from trt_edge_runner.trust import load_trust_store, now_utc
from trt_edge_runner.versions import Version, VersionError, parse_version

# Called with each step name as it completes (in-process observers, e.g. a test harness).
STEP_OBSERVERS: list[Callable[[str], None]] = []


@dataclass(frozen=True)
class InstallResult:
    slot: str
    name: str
    version: str
    previous: SlotInfo | None
    baseline_ms: dict[str, float]
    recovered: list[str]
    baseline_spread_ms: dict[str, float]
    floor: str  # the model's version floor after this install
    downgrade: str | None = None  # what --allow-downgrade let through, if anything


def pause_point(step: str) -> None:
    """Tell every registered observer that `step` has completed."""
    for observer in STEP_OBSERVERS:
        observer(step)


def now() -> str:
    """The state history's timestamp: UTC, whole seconds, ISO 8601."""
    return now_utc().isoformat()


@dataclass(frozen=True)
class FloorCheck:
    """How a bundle's version stands against its model's floor on this device.

    `refusal` is the message install raises (None: the floor allows it); `floor` is
    what the floor becomes once the bundle is active. The floor never goes down: a
    deliberate downgrade leaves it where it was, and a deliberate replacement of
    the floor version with other content moves only its recorded content.
    """

    floor: Floor
    refusal: str | None = None
    hint: str | None = None


def check_floor(
    floors: dict[str, Floor], name: str, version: Version, bundle_sha256: str
) -> FloorCheck:
    """Compare `name` `version` (whose bundle.json has `bundle_sha256`) with the device's floor."""
    mine = Floor(version.text, bundle_sha256)
    held = floors.get(name)
    if held is None:
        return FloorCheck(mine)
    floor = parse_version(held.version, f"the recorded floor of {name}")
    if version > floor:
        return FloorCheck(mine)
    if version == floor and bundle_sha256 == held.bundle_sha256:
        return FloorCheck(held)
    if version == floor:
        return FloorCheck(
            Floor(held.version, bundle_sha256),
            f"{name} {version} is the version this device already installed ({held.version}), "
            f"with other content: bundle.json sha256 {bundle_sha256[:16]}…, installed "
            f"{held.bundle_sha256[:16]}… (anti-rollback)",
            "a rebuilt bundle needs a new version; pass --allow-downgrade to replace "
            f"{name} {held.version} on purpose (recorded in the device's history)",
        )
    return FloorCheck(
        held,
        f"{name} {version} is older than {held.version}, the highest version of {name} this "
        "device has installed (anti-rollback)",
        "ship a higher version, or pass --allow-downgrade to install this one on purpose "
        "(recorded in the device's history; the floor stays at "
        f"{held.version})",
    )


_T = TypeVar("_T")
_Tx = TypeVar("_Tx", bound="_Transaction")


@dataclass(kw_only=True)
class _Transaction:
    """What every agent transaction holds: its store, the state it found and the one it commits.

    Mutable on purpose: each step records what it found or made for the steps after it,
    and the fields say which step sets them.
    """

    store: DeviceStore
    recovered: list[str] = field(default_factory=list)  # "recovered": what recover() cleaned up
    state: AgentState | None = None  # "recovered": the state found
    new_state: AgentState | None = None  # "switched": the state committed


def _have(value: _T | None) -> _T:
    """`value`, set by an earlier step: a step run before the one it needs is a bug."""
    if value is None:
        raise AssertionError("a transaction step ran before the step that sets its input")
    return value


def _run_steps(steps: Sequence[tuple[str, Callable[[_Tx], None]]], tx: _Tx) -> _Tx:
    """Run `steps` in order over `tx`, telling the observers each one's name as it completes.

    The one place steps are reported: a step cannot run unreported, or be reported
    under another step's name.
    """
    for name, step in steps:
        step(tx)
        pause_point(name)
    return tx


def _recover(tx: _Transaction) -> None:
    """Finish or undo what an interrupted operation left (`DeviceStore.recover`), then read the
    state the operation starts from."""
    tx.recovered = tx.store.recover()
    tx.state = tx.store.load()


def _link(tx: _Transaction) -> None:
    """Point `current` at the committed slot; `recover()` redoes it if a crash came first."""
    tx.store.link_current(_have(tx.new_state))


@dataclass(kw_only=True)
class _Install(_Transaction):
    """One install: `install_bundle`'s arguments, and what each step leaves for the next."""

    tar_path: Path
    keys_dir: Path
    facts: dict[str, str | None]
    smoke_runs: int
    smoke: bool
    executor: PhaseExecutor | None
    allow_downgrade: bool
    memory: MemoryCheck | None
    say: Callable[[str], None]
    open_files: ExitStack  # holds the bundle tar open from "verified" until "extracted"
    bundle_tar: BundleSource | None = None  # "verified" .. "extracted"
    document: bytes = b""  # "verified": bundle.json's bytes
    signature: DetachedSignature | None = None  # "verified"
    manifest: BundleManifest | None = None  # "verified"
    bundle_sha256: str = ""  # "version_checked"
    floor: FloorCheck | None = None  # "version_checked"
    downgrade: str | None = None  # "version_checked": what --allow-downgrade let through
    staging: Path | None = None  # "extracted": the verified files
    slot: str = ""  # "slot_released": the slot being written
    released: AgentState | None = None  # "slot_released": the state without that slot
    baseline: dict[str, float] = field(default_factory=dict)  # "smoke_tested": medians
    baseline_spread: dict[str, float] = field(default_factory=dict)  # "smoke_tested": MADs
    was: SlotInfo | None = None  # "switched": the model that was active


def _verify(tx: _Install) -> None:
    """Check `bundle.json`'s signature while it is still inside the tar or the assembled
    directory (nothing extracted)."""
    bundle_tar: BundleSource
    if tx.tar_path.is_dir():  # assembled by the follower from its blob store
        bundle_tar = BundleDirectory(tx.tar_path)
    else:
        bundle_tar = tx.open_files.enter_context(open_bundle_tar(tx.tar_path))
    tx.bundle_tar = bundle_tar
    document = bundle_tar.read_document(BUNDLE_JSON)
    sig_bytes = bundle_tar.read_document(BUNDLE_SIG)
    source = f"{tx.tar_path}:{BUNDLE_JSON}"
    try:
        trust = load_trust_store(tx.keys_dir, _have(tx.state).trust)
        signature = DetachedSignature.from_json(sig_bytes, f"{tx.tar_path}:{BUNDLE_SIG}")
        trust.verify_bundle(document, signature, source)
        manifest = parse_canonical_manifest(document, source)
    except SignatureError as exc:
        raise InstallRefused(str(exc), hint=exc.hint) from None
    tx.say(f"signature ok: {manifest.name} {manifest.version} (key {signature.key_id[:16]}…)")
    tx.document, tx.signature, tx.manifest = document, signature, manifest


def _check_fingerprint(tx: _Install) -> None:
    """Refuse a bundle built for another target, or one that does not fit this device's memory."""
    manifest = _have(tx.manifest)
    reasons = fingerprint_mismatches(manifest.target, tx.facts)
    if reasons:
        raise InstallRefused(
            f"{tx.tar_path}: built for target {manifest.target.get('id', '?')}, which does "
            "not match this device:\n  " + "\n  ".join(reasons)
        )
    if tx.memory is not None:  # part of "does it fit this device", before any writing
        note = tx.memory.check(manifest, str(tx.tar_path))
        if note is not None:
            tx.say(note)


def _check_version(tx: _Install) -> None:
    """Hold the bundle to its model's version floor (anti-rollback) unless `allow_downgrade`."""
    manifest = _have(tx.manifest)
    tx.bundle_sha256 = hashlib.sha256(tx.document).hexdigest()
    try:
        version = parse_version(manifest.version, f"{manifest.name} version")
        check = check_floor(_have(tx.state).floors, manifest.name, version, tx.bundle_sha256)
    except VersionError as exc:
        raise InstallRefused(f"{tx.tar_path}: {exc}", hint=exc.hint) from None
    if check.refusal is not None:
        if not tx.allow_downgrade:
            raise InstallRefused(f"{tx.tar_path}: refused: {check.refusal}", hint=check.hint)
        tx.downgrade = f"--allow-downgrade: {check.refusal}"
        tx.say(f"allowed on purpose: {check.refusal}")
    tx.floor = check


def _extract(tx: _Install) -> None:
    """Extract and verify in staging first, then close the tar: a bad archive changes nothing
    else (its staging folder is removed)."""
    manifest = _have(tx.manifest)
    staging = tx.store.staging_dir / uuid.uuid4().hex
    staging.mkdir()
    try:
        _have(tx.bundle_tar).extract(staging, manifest.files)
        try:
            verify_directory(staging, manifest)
        except BundleProblemsError as exc:  # the rule again, with every file's sha256
            raise InstallRefused(_problems(f"{tx.tar_path} (as extracted)", exc)) from None
        except RunnerError as exc:
            raise InstallRefused(f"{tx.tar_path}: {exc}") from None
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    tx.staging = staging
    tx.open_files.close()
    tx.bundle_tar = None


def _release_slot(tx: _Install) -> None:
    """Forget the inactive slot before touching its files: from here on it is no rollback
    target, and a crash must not leave state pointing at half a bundle."""
    state = _have(tx.state)
    tx.slot = state.inactive()
    released = state.with_slot(tx.slot, None)
    if released.previous == tx.slot:
        released = replace(released, previous=None)
    if released != state:
        tx.store.save(released)
    tx.released = released


def _fill_slot(tx: _Install) -> None:
    """Move the verified staging folder into the released slot, by rename."""
    slot_dir = tx.store.slot_dir(tx.slot)
    if slot_dir.exists():
        shutil.rmtree(slot_dir)
    os.replace(_have(tx.staging), slot_dir)
    tx.say(f"extracted into slot {tx.slot}")


def _smoke_test(tx: _Install) -> None:
    """Run every phase in the new slot: any failure refuses the install with the previous model
    still active; each phase's median and spread become the slot's health baseline (none
    with `smoke=False`)."""
    manifest = _have(tx.manifest)
    try:
        timings: list[PhaseTiming] = []
        if tx.smoke and tx.executor is not None:
            timings = run_every_phase(tx.store.slot_dir(tx.slot), tx.executor, runs=tx.smoke_runs)
    except Exception as exc:  # any failure to run the model (or a runner crash) refuses it
        raise InstallRefused(
            f"{tx.tar_path}: smoke run of {manifest.name} {manifest.version} in slot {tx.slot} "
            f"failed, previous model stays active: {exc}"
        ) from None
    summaries = {t.phase: t.summary for t in timings}
    tx.baseline = {phase: round(s.median_ms, 4) for phase, s in summaries.items()}
    tx.baseline_spread = {phase: round(s.spread_ms, 4) for phase, s in summaries.items()}
    if tx.smoke:
        tx.say(
            "smoke run ok: "
            + ", ".join(
                f"{p} {s.median_ms:.3f} ms (spread {s.spread_ms:.3f}, {s.runs} runs)"
                for p, s in summaries.items()
            )
        )


def _switch_to_new(tx: _Install) -> None:
    """The commit point: one atomic `state.json` replacement makes the new slot active and
    the old active slot the rollback target, and raises the model's floor."""
    manifest, released = _have(tx.manifest), _have(tx.released)
    at = now()
    info = SlotInfo(
        name=manifest.name,
        version=manifest.version,
        bundle_sha256=tx.bundle_sha256,
        installed_at=at,
        baseline_ms=tx.baseline,
        baseline_spread_ms=tx.baseline_spread,
        key_id=_have(tx.signature).key_id,
    )
    tx.was = was = released.info(released.active)
    detail = f"slot {tx.slot}" + (f", was {was.name} {was.version}" if was else "")
    kind = "downgrade" if tx.downgrade else "install"
    tx.new_state = replace(
        released,
        active=tx.slot,
        previous=released.active,
        slots={**released.slots, tx.slot: info},
        floors={**released.floors, manifest.name: _have(tx.floor).floor},
    ).with_event(Event(at, kind, tx.downgrade or detail, *_named(info)))
    tx.store.save(tx.new_state)


# The install transaction, in order. Every step before "switched" writes only staging and
# the inactive slot; "switched" is the commit point.
_INSTALL: tuple[tuple[str, Callable[[_Install], None]], ...] = (
    ("recovered", _recover),
    ("verified", _verify),
    ("fingerprint_checked", _check_fingerprint),
    ("version_checked", _check_version),
    ("extracted", _extract),
    ("slot_released", _release_slot),
    ("slot_filled", _fill_slot),
    ("smoke_tested", _smoke_test),
    ("switched", _switch_to_new),
    ("linked", _link),
)
STEPS: tuple[str, ...] = tuple(name for name, _ in _INSTALL)


def install_bundle(
    store: DeviceStore,
    tar_path: Path,
    keys_dir: Path,
    facts: dict[str, str | None],
    *,
    smoke_runs: int = DEFAULT_LATENCY_RUNS,
    smoke: bool = True,
    executor: PhaseExecutor | None = None,
    allow_downgrade: bool = False,
    progress: Callable[[str], None] | None = None,
    memory: MemoryCheck | None = None,
) -> InstallResult:
    """Install `tar_path` into the inactive slot and make it active, or raise InstallRefused.

    `tar_path` is a bundle `.tar`, or a bundle directory (what `trt-edge-device follow`
    assembles from its blob store): both go through every step below alike.

    The smoke run executes every phase with `executor` (the C++ runner as a child process,
    normally): a phase that fails, a runner refusal, and a runner that dies of a signal
    or overruns its time limit all refuse the install with the previous model active.
    `smoke=False` is for staging into an image on a host that cannot run the bundle
    (a Jetson rootfs on an x86 PC): no baseline is recorded, no executor is needed, and
    the device's first `health` run is the first time the model executes there.
    `allow_downgrade` lets a version below the model's floor (or the floor version with
    other content) through; the floor itself is never lowered, and the override is
    recorded in the history. `memory` checks the bundle's recorded needs against this
    device's memory (None: not checked, e.g. when staging an image on another machine).
    """
    if smoke and executor is None:
        raise ValueError("install_bundle: a smoke run needs an executor (or smoke=False)")
    with store.locked(), ExitStack() as open_files:
        tx = _Install(
            store=store,
            tar_path=tar_path,
            keys_dir=keys_dir,
            facts=facts,
            smoke_runs=smoke_runs,
            smoke=smoke,
            executor=executor,
            allow_downgrade=allow_downgrade,
            memory=memory,
            say=progress or (lambda _msg: None),
            open_files=open_files,
        )
        _run_steps(_INSTALL, tx)
    manifest = _have(tx.manifest)
    return InstallResult(
        slot=tx.slot,
        name=manifest.name,
        version=manifest.version,
        previous=tx.was,
        baseline_ms=tx.baseline,
        recovered=tx.recovered,
        baseline_spread_ms=tx.baseline_spread,
        floor=_have(tx.floor).floor.version,
        downgrade=tx.downgrade,
    )


def _problems(where: str, exc: BundleProblemsError) -> str:
    """The integrity refusal again, naming `where` instead of the staging directory."""
    try:
        refuse(where, exc.problems)
    except BundleProblemsError as named:
        return str(named)
    return str(exc)  # pragma: no cover - refuse always raises for problems


def _named(info: SlotInfo) -> tuple[str, str]:
    return info.name, info.version


@dataclass(kw_only=True)
class _Rollback(_Transaction):
    """One rollback: the keys its slot is checked against, and the slot it goes back to."""

    keys_dir: Path
    previous: str = ""  # "checked": the slot made active again
    info: SlotInfo | None = None  # "checked": what that slot holds


def _check_previous(tx: _Rollback) -> None:
    """The previous slot must be recorded, its files whole, and its signing key still known
    and not revoked."""
    state = _have(tx.state)
    previous = state.previous
    info = state.info(previous)
    if previous is None or info is None:
        raise AgentError(
            "nothing to roll back to: no previous slot is recorded "
            "(only one bundle was installed, or the last install overwrote it)"
        )
    slot_dir = tx.store.slot_dir(previous)
    try:
        document, manifest = read_canonical_manifest(slot_dir)
        verify_directory(slot_dir, manifest)
        signature = read_signature(slot_dir)
        trust = load_trust_store(tx.keys_dir, state.trust)
        trust.verify_installed(document, signature, str(slot_dir / BUNDLE_JSON))
    except (SignatureError, RunnerError) as exc:
        raise AgentError(
            f"slot {previous} cannot be rolled back to: {exc}",
            hint=getattr(exc, "hint", None),
        ) from None
    tx.previous, tx.info = previous, info


def _switch_to_previous(tx: _Rollback) -> None:
    """The commit point: one atomic `state.json` replacement makes the previous slot active and
    the current one the rollback target; the floor is left as it is."""
    state, info = _have(tx.state), _have(tx.info)
    left = state.info(state.active)
    floor = state.floors.get(info.name)
    detail = (
        f"slot {tx.previous}"
        + (f", from {left.name} {left.version}" if left else "")
        + (f"; floor stays {floor.version}" if floor else "")
    )
    tx.new_state = replace(state, active=tx.previous, previous=state.active).with_event(
        Event(now(), "rollback", detail, *_named(info))
    )
    tx.store.save(tx.new_state)


# The rollback transaction, in order, reported to the same observers as an install.
_ROLLBACK: tuple[tuple[str, Callable[[_Rollback], None]], ...] = (
    ("recovered", _recover),
    ("checked", _check_previous),
    ("switched", _switch_to_previous),
    ("linked", _link),
)
ROLLBACK_STEPS: tuple[str, ...] = tuple(name for name, _ in _ROLLBACK)


def rollback(store: DeviceStore, keys_dir: Path) -> AgentState:
    """Make the previous slot active again (after checking its files and that its signing key
    is still known and not revoked), keeping the current one as the new rollback target;
    AgentError when there is nothing to go back to.

    An explicit act on the device, so the version floor does not stop it, and it does not
    lower the floor either: re-installing the version rolled back from stays allowed (same
    content), a version below the floor still needs --allow-downgrade.
    """
    if not store.exists():
        raise NothingInstalled(f"{store.root}: nothing is installed here; nothing to roll back to")
    with store.locked():
        tx = _run_steps(_ROLLBACK, _Rollback(store=store, keys_dir=keys_dir))
    return _have(tx.new_state)
