"""The install transaction: verified, fingerprint- and version-checked, extracted into the
inactive slot, smoke-tested, then made active by one atomic `state.json` replacement.

The version check is anti-rollback: per model the device keeps the highest version it
has installed (its floor, in `state.json`) and refuses a lower one, or the floor
version with other content (`check_floor`), unless told so (`allow_downgrade`).

Every step before `switch` writes only staging and the inactive slot, so a crash
there leaves the previous model active and runnable; `switch` is the commit
point; `link` (the `current` symlink) is redone by `recover()` if it was missed.
Steps are named (`STEPS`, and `ROLLBACK_STEPS` for rollback) so operators can read
where an operation stopped. The archive is extracted and verified in staging before
the inactive slot is released, so a bad archive changes nothing else at all.
Callables in `STEP_OBSERVERS` are called with each step's name as it completes;
nothing is registered in the shipped CLI. The crash-safety test registers one
from its own driver script to stop the agent there and SIGKILL it.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from trt_edge_runner.agent.errors import AgentError, InstallRefused, NothingInstalled
from trt_edge_runner.agent.facts import fingerprint_mismatches
from trt_edge_runner.agent.memory_check import MemoryCheck
from trt_edge_runner.agent.smoke import PhaseEngine, PhaseTiming, run_every_phase
from trt_edge_runner.agent.store import AgentState, DeviceStore, Event, Floor, SlotInfo
from trt_edge_runner.agent.tarball import open_bundle_tar
from trt_edge_runner.bundle_format import BUNDLE_JSON, BUNDLE_SIG
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

STEPS: tuple[str, ...] = (
    "recovered",
    "verified",
    "fingerprint_checked",
    "version_checked",
    "extracted",
    "slot_released",
    "slot_filled",
    "smoke_tested",
    "switched",
    "linked",
)
# The steps of `rollback`, reported to the same observers.
ROLLBACK_STEPS: tuple[str, ...] = ("recovered", "checked", "switched", "linked")
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


def install_bundle(
    store: DeviceStore,
    tar_path: Path,
    keys_dir: Path,
    facts: dict[str, str | None],
    *,
    smoke_runs: int = 3,
    smoke: bool = True,
    engine: PhaseEngine | None = None,
    allow_downgrade: bool = False,
    progress: Callable[[str], None] | None = None,
    memory: MemoryCheck | None = None,
) -> InstallResult:
    """Install `tar_path` into the inactive slot and make it active, or raise InstallRefused.

    The smoke run executes every phase with `engine` (the C++ runner as a child process,
    normally): a phase that fails, a runner refusal, and a runner that dies of a signal
    or overruns its time limit all refuse the install with the previous model active.
    `smoke=False` is for staging into an image on a host that cannot run the bundle
    (a Jetson rootfs on an x86 PC): no baseline is recorded, no engine is needed, and
    the device's first `health` run is the first time the model executes there.
    `allow_downgrade` lets a version below the model's floor (or the floor version with
    other content) through; the floor itself is never lowered, and the override is
    recorded in the history. `memory` checks the bundle's recorded needs against this
    device's memory (None: not checked, e.g. when staging an image on another machine).
    """
    if smoke and engine is None:
        raise ValueError("install_bundle: a smoke run needs an engine (or smoke=False)")
    say = progress or (lambda _msg: None)
    with store.locked():
        recovered = store.recover()
        state = store.load()
        pause_point("recovered")

        with open_bundle_tar(tar_path) as bundle_tar:
            document = bundle_tar.read_document(BUNDLE_JSON)
            sig_bytes = bundle_tar.read_document(BUNDLE_SIG)
            source = f"{tar_path}:{BUNDLE_JSON}"
            try:
                trust = load_trust_store(keys_dir, state.trust)
                signature = DetachedSignature.from_json(sig_bytes, f"{tar_path}:{BUNDLE_SIG}")
                trust.verify_bundle(document, signature, source)
                manifest = parse_canonical_manifest(document, source)
            except SignatureError as exc:
                raise InstallRefused(str(exc), hint=exc.hint) from None
            say(f"signature ok: {manifest.name} {manifest.version} (key {signature.key_id[:16]}…)")
            pause_point("verified")

            reasons = fingerprint_mismatches(manifest.target, facts)
            if reasons:
                raise InstallRefused(
                    f"{tar_path}: built for target {manifest.target.get('id', '?')}, which does "
                    "not match this device:\n  " + "\n  ".join(reasons)
                )
            if memory is not None:  # part of "does it fit this device", before any writing
                note = memory.check(manifest, str(tar_path))
                if note is not None:
                    say(note)
            pause_point("fingerprint_checked")

            bundle_sha256 = hashlib.sha256(document).hexdigest()
            try:
                version = parse_version(manifest.version, f"{manifest.name} version")
                check = check_floor(state.floors, manifest.name, version, bundle_sha256)
            except VersionError as exc:
                raise InstallRefused(f"{tar_path}: {exc}", hint=exc.hint) from None
            downgrade: str | None = None
            if check.refusal is not None:
                if not allow_downgrade:
                    raise InstallRefused(f"{tar_path}: refused: {check.refusal}", hint=check.hint)
                downgrade = f"--allow-downgrade: {check.refusal}"
                say(f"allowed on purpose: {check.refusal}")
            pause_point("version_checked")

            # Extract and verify in staging first: a bad archive changes nothing else.
            staging = store.staging_dir / uuid.uuid4().hex
            staging.mkdir()
            try:
                bundle_tar.extract(staging, manifest.files)
                try:
                    verify_directory(staging, manifest)
                except BundleProblemsError as exc:  # the rule again, with every file's sha256
                    raise InstallRefused(_problems(f"{tar_path} (as extracted)", exc)) from None
                except RunnerError as exc:
                    raise InstallRefused(f"{tar_path}: {exc}") from None
            except BaseException:
                shutil.rmtree(staging, ignore_errors=True)
                raise
        pause_point("extracted")

        slot = state.inactive()
        # Forget the inactive slot before touching its files: from here on it is
        # no rollback target, and a crash must not leave state pointing at half a bundle.
        released = state.with_slot(slot, None)
        if released.previous == slot:
            released = replace(released, previous=None)
        if released != state:
            store.save(released)
        pause_point("slot_released")

        slot_dir = store.slot_dir(slot)
        if slot_dir.exists():
            shutil.rmtree(slot_dir)
        os.replace(staging, slot_dir)
        say(f"extracted into slot {slot}")
        pause_point("slot_filled")

        try:
            timings: list[PhaseTiming] = []
            if smoke and engine is not None:
                timings = run_every_phase(slot_dir, engine, runs=smoke_runs)
        except Exception as exc:  # any failure to run the model (or a runner crash) refuses it
            raise InstallRefused(
                f"{tar_path}: smoke run of {manifest.name} {manifest.version} in slot {slot} "
                f"failed, previous model stays active: {exc}"
            ) from None
        baseline = {t.phase: round(t.median_ms, 4) for t in timings}
        if smoke:
            say("smoke run ok: " + ", ".join(f"{p} {ms:.2f} ms" for p, ms in baseline.items()))
        pause_point("smoke_tested")

        at = now()
        info = SlotInfo(
            name=manifest.name,
            version=manifest.version,
            bundle_sha256=bundle_sha256,
            installed_at=at,
            baseline_ms=baseline,
            key_id=signature.key_id,
        )
        was = released.info(released.active)
        detail = f"slot {slot}" + (f", was {was.name} {was.version}" if was else "")
        new_state = replace(
            released,
            active=slot,
            previous=released.active,
            slots={**released.slots, slot: info},
            floors={**released.floors, manifest.name: check.floor},
        ).with_event(
            Event(at, "downgrade" if downgrade else "install", downgrade or detail, *_named(info))
        )
        store.save(new_state)
        pause_point("switched")
        store.link_current(new_state)
        pause_point("linked")
        return InstallResult(
            slot=slot,
            name=manifest.name,
            version=manifest.version,
            previous=was,
            baseline_ms=baseline,
            recovered=recovered,
            floor=check.floor.version,
            downgrade=downgrade,
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
        store.recover()
        state = store.load()
        pause_point("recovered")
        previous = state.previous
        info = state.info(previous)
        if previous is None or info is None:
            raise AgentError(
                "nothing to roll back to: no previous slot is recorded "
                "(only one bundle was installed, or the last install overwrote it)"
            )
        slot_dir = store.slot_dir(previous)
        try:
            document, manifest = read_canonical_manifest(slot_dir)
            verify_directory(slot_dir, manifest)
            signature = read_signature(slot_dir)
            trust = load_trust_store(keys_dir, state.trust)
            trust.verify_installed(document, signature, str(slot_dir / BUNDLE_JSON))
        except (SignatureError, RunnerError) as exc:
            raise AgentError(
                f"slot {previous} cannot be rolled back to: {exc}",
                hint=getattr(exc, "hint", None),
            ) from None
        pause_point("checked")
        left = state.info(state.active)
        floor = state.floors.get(info.name)
        detail = (
            f"slot {previous}"
            + (f", from {left.name} {left.version}" if left else "")
            + (f"; floor stays {floor.version}" if floor else "")
        )
        new_state = replace(state, active=previous, previous=state.active).with_event(
            Event(now(), "rollback", detail, *_named(info))
        )
        store.save(new_state)
        pause_point("switched")
        store.link_current(new_state)
        pause_point("linked")
        return new_state
