"""One poll of a channel, and the loop of polls (`trt-edge-device follow`).

A poll: read the manifest the channel's tag points at; fetch its two small documents
(`bundle.json`, `bundle.sig`) and verify the signature against the device's trust store and
the version against the model's floor (anti-rollback) *before* fetching anything large, with
the same functions `install` uses; then fetch only the file blobs the store lacks (the signed
`bundle.json`'s digests, resumable, within the disk budget), assemble the bundle directory from
hard links and hand it to `install_bundle` — the one install transaction (A/B slot, smoke run,
atomic switch; a running `serve` hot-swaps when `state.json` changes). Afterwards the store is
pruned to what the installed slots hold. A device that was offline for a week polls once and
installs whatever the channel holds now: versions in between are never fetched.

What the device was told over MQTT (`ROOT/desired.json`, written by `trt-edge-device mqtt`,
read on every poll through `link.desired.read_desired`) comes first: `hold` installs nothing
new (a rollout holds the devices it has not reached, and a rolled-back device stays on the
bundle it went back to); a `target` (a staged rollout's candidate) is fetched instead of the
channel's tag. A target in another repository than the one followed is refused.

The loop polls every `interval_s` (± `jitter`, so a fleet does not poll in step), and after a
failure waits `interval_s * 2**failures` (capped at `max_backoff_s`, jittered too). A refusal
(bad signature, an older version, a tampered blob) is not retried until the tag moves.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import random
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from trt_edge_runner.agent.errors import AgentError, InstallRefused
from trt_edge_runner.agent.health import HealthReport
from trt_edge_runner.agent.install import InstallResult, check_floor, now, rollback
from trt_edge_runner.agent.store import DeviceStore
from trt_edge_runner.bundle_format import BUNDLE_JSON, BUNDLE_SIG, BundleManifest
from trt_edge_runner.errors import TrtEdgeError
from trt_edge_runner.follow.artifact import ArtifactError, blobs_of, documents_of
from trt_edge_runner.follow.blob_store import BlobStore, Budget, FetchCounters
from trt_edge_runner.follow.follower_state import (
    FollowerState,
    Outcome,
    load_follower_state,
    save_follower_state,
)
from trt_edge_runner.follow.reference import parse_reference
from trt_edge_runner.follow.registry import RegistryClient
from trt_edge_runner.link.desired import Desired, desired_path, read_desired
from trt_edge_runner.signature import (
    DetachedSignature,
    SignatureError,
    parse_canonical_manifest,
    read_canonical_manifest,
)
from trt_edge_runner.trust import load_trust_store
from trt_edge_runner.versions import VersionError, parse_version

FOLLOW_DIR = "follow"
Install = Callable[[Path], InstallResult]
HealthCheck = Callable[[], HealthReport]


class StillRefused(InstallRefused):
    """The channel still points at a manifest this device refused; `original` is why."""

    def __init__(self, original: str, message: str, *, hint: str) -> None:
        super().__init__(message, hint=hint)
        self.original = original


@dataclass(frozen=True)
class Follower:
    """A device following one channel: its registry, agent root, trust anchors and install."""

    client: RegistryClient
    agent: DeviceStore
    keys_dir: Path
    install: Install  # `install_bundle` bound to this device's engine, facts and memory check
    budget: Budget = field(default_factory=Budget)
    max_rate: int | None = None
    # `follow --health-check`: the agent's health check after each install; a failure rolls
    # the device back and refuses the bundle until the tag moves (a device following a
    # channel alone; in a staged rollout the rollout's gate does this from the link's report).
    health: HealthCheck | None = None

    @property
    def blobs(self) -> BlobStore:
        return BlobStore(self.agent.root / FOLLOW_DIR, max_rate=self.max_rate)

    @property
    def state_path(self) -> Path:
        return self.agent.root / FOLLOW_DIR / "state.json"

    def poll(self, say: Callable[[str], None] = lambda _m: None) -> FollowerState:
        """One poll; the follower state it recorded. Refusals and failures are recorded, then
        raised (the loop catches them; `--once` reports them). One follower at a time: a
        second one (the unit, and `--once` by hand) is refused rather than writing the same
        partial files."""
        with self._alone():
            return self._poll(say)

    @contextmanager
    def _alone(self) -> Iterator[None]:
        lock = self.agent.root / FOLLOW_DIR / "follow.lock"
        lock.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise AgentError(
                    f"{lock}: another follower is polling on this device",
                    hint="stop it first (systemctl stop trt-edge-follow), or wait for it",
                ) from None
            yield
        finally:
            os.close(fd)

    def _poll(self, say: Callable[[str], None]) -> FollowerState:
        before = load_follower_state(self.state_path)
        counters = FetchCounters()
        digest: str | None = None
        try:
            desired = read_desired(self.agent.root)
            if desired.hold:
                detail = f"held by command {desired.command_id} ({desired.issued_at})"
                return self._record(before, "held", detail, counters, None)
            doc, digest = self.client.manifest(self._tag(desired))
            outcome, detail = self._update(doc, digest, before, counters, say)
        except (InstallRefused, ArtifactError) as exc:
            detail = exc.original if isinstance(exc, StillRefused) else str(exc)
            self._record(before, "refused", detail, counters, digest)
            raise InstallRefused(str(exc), hint=getattr(exc, "hint", None)) from None
        except TrtEdgeError as exc:
            self._record(before, "error", str(exc), counters, digest)
            raise
        return self._record(before, outcome, detail, counters, digest)

    def _tag(self, desired: Desired) -> str:
        """The tag to fetch: the rollout's target when one was given, else the channel."""
        followed = self.client.reference
        if desired.target is None:
            return followed.tag
        target = parse_reference(desired.target.reference, "desired.json target reference")
        if (target.registry, target.repository) != (followed.registry, followed.repository):
            raise InstallRefused(
                f"{desired_path(self.agent.root)}: target {target} (command "
                f"{desired.command_id}) is not in the followed repository "
                f"{followed.registry}/{followed.repository}",
                hint="publish the candidate to the repository the devices follow",
            )
        return target.tag

    def _update(
        self,
        doc: dict[str, object],
        digest: str,
        before: FollowerState | None,
        counters: FetchCounters,
        say: Callable[[str], None],
    ) -> tuple[Outcome, str]:
        where = f"{self.client.reference} ({digest[:19]}…)"
        config, sig = documents_of(doc, where)
        state = self.agent.load()
        active = state.info(state.active)
        if active is not None and active.bundle_sha256 == config.hex:
            return "up_to_date", f"{active.name} {active.version} is installed and active"
        if before is not None and before.refused_digest == digest:
            raise StillRefused(
                before.detail,
                f"{where}: refused before, and the tag has not moved: {before.detail}",
                hint=f"move the tag to a bundle this device accepts, or delete {self.state_path} "
                "to try this one again (after adding a key, say)",
            )
        store = self.blobs
        document = store.fetch(config, self.client.blob, counters).read_bytes()
        signature_bytes = store.fetch(sig, self.client.blob, counters).read_bytes()
        manifest = self._verified(document, signature_bytes, where)
        say(f"{where}: {manifest.name} {manifest.version}, signature ok")
        files = blobs_of(manifest)
        missing = [blob for blob in files if not store.has(blob)]
        store.check_budget(missing, self.budget)
        for blob in files:
            store.fetch(blob, self.client.blob, counters)
        say(
            f"fetched {counters.blobs_fetched} blob(s), {counters.bytes_fetched} bytes; "
            f"{counters.blobs_reused} already here"
        )
        bundle = store.assemble(
            config.hex, files, {BUNDLE_JSON: document, BUNDLE_SIG: signature_bytes}
        )
        try:
            result = self.install(bundle)
        except InstallRefused:
            # Remembered as refused: not fetched again until the tag moves, so its blobs
            # would only hold the disk budget.
            store.prune(self._installed_blobs())
            raise
        finally:
            store.drop_bundle(config.hex)
        self._check_installed(result, where)
        store.prune(self._installed_blobs())
        return "installed", f"installed {result.name} {result.version} into slot {result.slot}"

    def _check_installed(self, result: InstallResult, where: str) -> None:
        """With a health check: a bundle that fails it is rolled back at once and refused
        (`InstallRefused`: recorded as refused, not retried until the tag moves)."""
        if self.health is None:
            return
        report = self.health()
        if report.ok:
            return
        try:
            back = rollback(self.agent, self.keys_dir)
            info = back.info(back.active)
            undone = f"rolled back to {info.name} {info.version}" if info else "rolled back"
        except AgentError as exc:
            undone = f"and could not roll back: {exc}"
        raise InstallRefused(
            f"{where}: {result.name} {result.version} failed its health check after install "
            f"({report.reason}); {undone}",
            hint="fix the bundle and publish a new version; this one is not retried until the "
            "channel's tag moves",
        )

    def _verified(self, document: bytes, signature_bytes: bytes, where: str) -> BundleManifest:
        """The signed bundle.json's manifest, checked as `install` checks it: the signature
        against the trust store, then the version against the floor (nothing large fetched)."""
        state = self.agent.load()
        source = f"{where}: {BUNDLE_JSON}"
        try:
            trust = load_trust_store(self.keys_dir, state.trust)
            signature = DetachedSignature.from_json(signature_bytes, f"{where}: {BUNDLE_SIG}")
            trust.verify_bundle(document, signature, source)
            manifest = parse_canonical_manifest(document, source)
            version = parse_version(manifest.version, f"{manifest.name} version")
        except (SignatureError, VersionError) as exc:
            raise InstallRefused(str(exc), hint=exc.hint) from None
        sha = hashlib.sha256(document).hexdigest()
        check = check_floor(state.floors, manifest.name, version, sha)
        if check.refusal is not None:
            raise InstallRefused(f"{where}: refused: {check.refusal}", hint=check.hint)
        return manifest

    def _installed_blobs(self) -> set[str]:
        """Hex digests of every file (and document) the agent's slots hold: what pruning keeps."""
        keep: set[str] = set()
        state = self.agent.load()
        for slot, info in state.slots.items():
            if info is None:
                continue
            try:
                document, manifest = read_canonical_manifest(self.agent.slot_dir(slot))
            except TrtEdgeError:
                continue
            keep.add(hashlib.sha256(document).hexdigest())
            keep.update(blob.hex for blob in blobs_of(manifest))
        sig_blobs = {
            hashlib.sha256((self.agent.slot_dir(s) / BUNDLE_SIG).read_bytes()).hexdigest()
            for s, info in state.slots.items()
            if info is not None and (self.agent.slot_dir(s) / BUNDLE_SIG).is_file()
        }
        return keep | sig_blobs

    def _record(
        self,
        before: FollowerState | None,
        outcome: Outcome,
        detail: str,
        counters: FetchCounters,
        digest: str | None,
    ) -> FollowerState:
        failures = (before.failures if before else 0) + 1 if outcome == "error" else 0
        state = FollowerState(
            reference=str(self.client.reference),
            checked_at=now(),
            outcome=outcome,
            detail=detail,
            failures=failures,
            bytes_fetched=counters.bytes_fetched,
            bytes_fetched_total=(before.bytes_fetched_total if before else 0)
            + counters.bytes_fetched,
            blobs_fetched=counters.blobs_fetched,
            blobs_reused=counters.blobs_reused,
            manifest_digest=digest,
            installed_digest=digest
            if outcome == "installed"
            else (before.installed_digest if before else None),
            refused_digest=digest if outcome == "refused" else None,
        )
        save_follower_state(self.state_path, state)
        return state


@dataclass(frozen=True)
class Schedule:
    """When the loop polls: every `interval_s` ± `jitter` (a fraction), and after `failures`
    failed polls in a row `interval_s * 2**failures`, at most `max_backoff_s`."""

    interval_s: float = 300.0
    jitter: float = 0.2
    max_backoff_s: float = 3600.0

    def delay(self, failures: int, rng: random.Random) -> float:
        base = (
            min(self.interval_s * (2 ** min(failures, 30)), self.max_backoff_s)
            if failures
            else self.interval_s
        )
        return max(0.0, base * (1 + rng.uniform(-self.jitter, self.jitter)))


def follow_loop(
    follower: Follower,
    schedule: Schedule,
    *,
    max_polls: int | None,
    say: Callable[[str], None],
    sleep: Callable[[float], None] = time.sleep,
    rng: random.Random | None = None,
) -> FollowerState | None:
    """Poll until `max_polls` polls have run (None: until stopped); the last state recorded."""
    rng = rng or random.Random()
    last: FollowerState | None = None
    polls = 0
    while max_polls is None or polls < max_polls:
        polls += 1
        try:
            last = follower.poll(say)
            say(f"{last.outcome}: {last.detail}")
        except AgentError as exc:
            say(f"refused: {exc}" if isinstance(exc, InstallRefused) else f"error: {exc}")
            last = load_follower_state(follower.state_path)
        except TrtEdgeError as exc:
            say(f"error: {exc}")
            last = load_follower_state(follower.state_path)
        if max_polls is not None and polls >= max_polls:
            break
        failures = last.failures if last is not None else 0
        sleep(schedule.delay(failures, rng))
    return last
