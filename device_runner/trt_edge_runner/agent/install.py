"""The install transaction: verified, fingerprint-checked, extracted into the inactive slot,
smoke-tested, then made active by one atomic `state.json` replacement.

Every step before `switch` writes only staging and the inactive slot, so a crash
there leaves the previous model active and runnable; `switch` is the commit
point; `link` (the `current` symlink) is redone by `recover()` if it was missed.
Steps are named (`STEPS`) so operators can read where an install stopped.
Callables in `STEP_OBSERVERS` are called with each step's name as it completes;
nothing is registered in the shipped CLI. The crash-safety test registers one
from its own driver script to stop the agent there and SIGKILL it.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import shutil
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from trt_edge_runner.agent.errors import AgentError, InstallRefused, NothingInstalled
from trt_edge_runner.agent.facts import fingerprint_mismatches
from trt_edge_runner.agent.smoke import PhaseEngine, PhaseTiming, run_every_phase
from trt_edge_runner.agent.store import AgentState, DeviceStore, SlotInfo
from trt_edge_runner.agent.tarball import open_bundle_tar
from trt_edge_runner.bundle_format import BUNDLE_JSON, BUNDLE_SIG
from trt_edge_runner.bundle_integrity import verify_directory
from trt_edge_runner.errors import RunnerError
from trt_edge_runner.signature import (
    DetachedSignature,
    SignatureError,
    load_trusted_keys,
    parse_canonical_manifest,
    read_canonical_manifest,
    verify_document,
)

STEPS: tuple[str, ...] = (
    "recovered",
    "verified",
    "fingerprint_checked",
    "slot_released",
    "extracted",
    "smoke_tested",
    "switched",
    "linked",
)
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


def pause_point(step: str) -> None:
    """Tell every registered observer that `step` has completed."""
    for observer in STEP_OBSERVERS:
        observer(step)


def _now() -> str:
    # timezone.utc, not datetime.UTC (3.11+): devices run Python 3.10 (JetPack 6).
    return dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat()


def install_bundle(
    store: DeviceStore,
    tar_path: Path,
    keys_dir: Path,
    facts: dict[str, str | None],
    *,
    smoke_runs: int = 3,
    smoke: bool = True,
    engine: PhaseEngine | None = None,
    progress: Callable[[str], None] | None = None,
) -> InstallResult:
    """Install `tar_path` into the inactive slot and make it active, or raise InstallRefused.

    The smoke run executes every phase with `engine` (the C++ runner as a child process,
    normally): a phase that fails, a runner refusal, and a runner that dies of a signal
    or overruns its time limit all refuse the install with the previous model active.
    `smoke=False` is for staging into an image on a host that cannot run the bundle
    (a Jetson rootfs on an x86 PC): no baseline is recorded, no engine is needed, and
    the device's first `health` run is the first time the model executes there.
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
                trusted = load_trusted_keys(keys_dir)
                signature = DetachedSignature.from_json(sig_bytes, f"{tar_path}:{BUNDLE_SIG}")
                verify_document(document, signature, trusted, source)
                manifest = parse_canonical_manifest(document, source)
            except SignatureError as exc:
                raise InstallRefused(str(exc)) from None
            say(f"signature ok: {manifest.name} {manifest.version} (key {signature.key_id[:16]}…)")
            pause_point("verified")

            reasons = fingerprint_mismatches(manifest.target, facts)
            if reasons:
                raise InstallRefused(
                    f"{tar_path}: built for target {manifest.target.get('id', '?')}, which does "
                    "not match this device:\n  " + "\n  ".join(reasons)
                )
            pause_point("fingerprint_checked")

            slot = state.inactive()
            # Forget the inactive slot before touching its files: from here on it is
            # no rollback target, and a crash must not leave state pointing at half a bundle.
            released = state.with_slot(slot, None)
            if released.previous == slot:
                released = AgentState(released.active, None, released.slots)
            if released != state:
                store.save(released)
            pause_point("slot_released")

            staging = store.staging_dir / uuid.uuid4().hex
            staging.mkdir()
            bundle_tar.extract(staging, manifest.files)
        try:
            verify_directory(staging, manifest)
        except RunnerError as exc:  # the integrity rule, now with every file's sha256
            raise InstallRefused(f"{tar_path}: {exc}") from None
        slot_dir = store.slot_dir(slot)
        if slot_dir.exists():
            shutil.rmtree(slot_dir)
        os.replace(staging, slot_dir)
        say(f"extracted into slot {slot}")
        pause_point("extracted")

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

        info = SlotInfo(
            name=manifest.name,
            version=manifest.version,
            bundle_sha256=hashlib.sha256(document).hexdigest(),
            installed_at=_now(),
            baseline_ms=baseline,
        )
        new_state = AgentState(
            active=slot, previous=released.active, slots={**released.slots, slot: info}
        )
        store.save(new_state)
        pause_point("switched")
        store.link_current(new_state)
        pause_point("linked")
        return InstallResult(
            slot=slot,
            name=manifest.name,
            version=manifest.version,
            previous=released.info(released.active),
            baseline_ms=baseline,
            recovered=recovered,
        )


def rollback(store: DeviceStore) -> AgentState:
    """Make the previous slot active again (after checking its files), keeping the current one
    as the new rollback target; AgentError when there is nothing to go back to."""
    if not store.exists():
        raise NothingInstalled(f"{store.root}: nothing is installed here; nothing to roll back to")
    with store.locked():
        store.recover()
        state = store.load()
        previous = state.previous
        info = state.info(previous)
        if previous is None or info is None:
            raise AgentError(
                "nothing to roll back to: no previous slot is recorded "
                "(only one bundle was installed, or the last install overwrote it)"
            )
        try:
            _document, manifest = read_canonical_manifest(store.slot_dir(previous))
            verify_directory(store.slot_dir(previous), manifest)
        except (SignatureError, RunnerError) as exc:
            raise AgentError(f"slot {previous} cannot be rolled back to: {exc}") from None
        new_state = AgentState(active=previous, previous=state.active, slots=state.slots)
        store.save(new_state)
        store.link_current(new_state)
        return new_state
