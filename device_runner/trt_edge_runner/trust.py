"""The device's trust store: which keys may sign what it installs, and how that changes.

A device trusts the ed25519 keys an operator put in its keys directory (the
**anchors**: `KEYS/*.pub`, as `trt-edge flash --pubkey` or a provisioning step writes
them). Two signed documents change that trust, both ed25519 over canonical JSON in
one envelope, and both accepted only when a key the device trusts *now* signed them:

- a **rotation statement** (`trt-edge keys rotate`): "key NEW (its raw public key,
  an optional not-after date) succeeds key OLD", signed by OLD. A device that trusts
  OLD then trusts NEW. By default the statement also **retires** OLD: bundles it
  signs are refused from then on (what it signed before stays installed, and a
  rollback to it is allowed: retired is not compromised). A key is rotated in once.
- a **revocation list** (`trt-edge keys revoke`): key ids with a reason, and a
  version number. A device refuses a list older than the newest it accepted
  (rollback protection of the trust metadata itself), the same version with other
  content, and a list that drops a key an earlier list revoked: revocations are
  permanent. One exception keeps a leaked key from freezing revocation by
  publishing a list with a huge version first: a lower version is accepted when it
  revokes the key that signed the newer one (that key's word no longer counts).

Beside the anchors, an optional **local policy** `KEYS/keys.json`, written by the
operator and unsigned (it has the same authority as the `.pub` files beside it)::

    {"not_after": {"<key id>": "2027-12-31T23:59:59Z"}, "revoked": {"<key id>": "reason"}}

Accepted documents are kept in the agent's `state.json` (`agent.store.TrustRecord`),
so they change atomically with everything else and a read-only keys directory (a
flashed rootfs) still works; they are verified again each time the store is built,
so a rotation whose signer is later revoked stops counting (its new key with it,
unless that key is also an anchor).

A key's status, in this order: **revoked** (by a signed list or the local policy),
**unknown** (neither an anchor nor rotated in by a key still valid), **retired**
(a rotation moved on from it), **expired** (its not-after date, from its rotation
statement or the local policy, whichever is earlier, has passed by this device's
clock), else **trusted**. Only a trusted key's signature is accepted on a bundle or
a trust document; every refusal names the key id and the reason.

What this takes from TUF and what it leaves out is written in docs/fleet.md ("Keys:
rotation, expiry, revocation"). Needs `cryptography`; standard library otherwise,
Python 3.10.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import hashlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trt_edge_runner.bundle_format import canonical_json
from trt_edge_runner.errors import EXIT_BAD_INPUT, TrtEdgeError
from trt_edge_runner.json_documents import parse_json_object, read_file_bytes
from trt_edge_runner.signature import (
    KEY_ID_PATTERN,
    PUBLIC_KEY_SUFFIX,
    DetachedSignature,
    SignatureError,
    check_signature,
    key_id,
    load_public_key,
)
from trt_edge_runner.trust_record import TrustRecord

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

ROTATION_TYPE = "trt-edge/key-rotation"
REVOCATIONS_TYPE = "trt-edge/revocations"
TRUST_SPEC = 1
LOCAL_POLICY = "keys.json"
# Signatures over trust documents cover this prefix too, so a signature made for a
# trust document can never be passed off as one over a bundle.json, or the reverse.
TRUST_DOMAIN = b"trt-edge trust document v1\n"
TIME_FORMAT = "%Y-%m-%dT%H:%M:%SZ"
MAX_TRUST_DOCUMENT_BYTES = 1 << 20
MAX_REVOKED = 4096


class TrustError(SignatureError):
    """A key or a trust document is refused; the message names the key id and why (exit 1)."""


class TrustConfigError(TrtEdgeError):
    """The operator's local policy (`KEYS/keys.json`) cannot be used (exit 2: fix the file)."""

    exit_code = EXIT_BAD_INPUT


class KeyState(Enum):
    TRUSTED = "trusted"
    UNKNOWN = "unknown"
    RETIRED = "retired"
    EXPIRED = "expired"
    REVOKED = "revoked"


@dataclass(frozen=True)
class KeyStatus:
    state: KeyState
    reason: str  # a clause: "is revoked (leaked; revocation list v3)", "expired on …"


def now_utc() -> dt.datetime:
    # timezone.utc, not datetime.UTC (3.11+): devices run Python 3.10 (JetPack 6).
    return dt.datetime.now(dt.timezone.utc).replace(microsecond=0)


def format_time(moment: dt.datetime) -> str:
    return moment.astimezone(dt.timezone.utc).strftime(TIME_FORMAT)


def parse_time(text: Any, what: str, error: Callable[[str], Exception]) -> dt.datetime:
    """A `YYYY-MM-DDTHH:MM:SSZ` UTC timestamp, else `error(...)` naming `what`."""
    if isinstance(text, str):
        try:
            moment = dt.datetime.strptime(text, TIME_FORMAT)
        except ValueError:
            pass
        else:
            return moment.replace(tzinfo=dt.timezone.utc)
    raise error(f"{what}: expected a UTC time like 2027-12-31T23:59:59Z, got {text!r}")


def check_key_id(value: Any, what: str, error: Callable[[str], Exception]) -> str:
    if not isinstance(value, str) or not KEY_ID_PATTERN.fullmatch(value):
        raise error(f"{what}: expected a key id (64 lowercase hex digits), got {value!r}")
    return value


def signing_input(signed: Mapping[str, Any]) -> bytes:
    """The bytes a trust document's signatures cover."""
    return TRUST_DOMAIN + canonical_json(signed)


def _error_at(source: str) -> Callable[[str], TrustError]:
    """The `fail` of a trust document's checks: a TrustError that starts with `source`."""

    def fail(message: str) -> TrustError:
        return TrustError(f"{source}: {message}")

    return fail


# ---- the envelope -------------------------------------------------------------------
@dataclass(frozen=True)
class Envelope:
    """`{"signed": {...}, "signatures": [{"key_id": ..., "signature": base64}]}`."""

    signed: dict[str, Any]
    signatures: tuple[tuple[str, bytes], ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "signed": self.signed,
            "signatures": [
                {"key_id": kid, "signature": base64.b64encode(sig).decode("ascii")}
                for kid, sig in self.signatures
            ],
        }

    def to_json(self) -> bytes:
        return canonical_json(self.to_dict())

    @property
    def content_sha256(self) -> str:
        """sha256 of what was signed (the same document, whoever signed it)."""
        return hashlib.sha256(canonical_json(self.signed)).hexdigest()

    @property
    def kind(self) -> str:
        return str(self.signed.get("type"))

    def signed_by(self, key_id_: str, public_key: Ed25519PublicKey) -> bool:
        """Whether a signature in the envelope names `key_id_` and verifies under its key."""
        from cryptography.exceptions import InvalidSignature

        message = signing_input(self.signed)
        for kid, sig in self.signatures:
            if kid != key_id_:
                continue
            try:
                public_key.verify(sig, message)
            except InvalidSignature:
                continue
            return True
        return False

    @classmethod
    def from_dict(cls, doc: Any, source: str) -> Envelope:
        fail = _error_at(source)
        if not isinstance(doc, dict) or set(doc) != {"signed", "signatures"}:
            raise fail('a trust document is {"signed": {...}, "signatures": [...]}')
        signed, raw_signatures = doc["signed"], doc["signatures"]
        if not isinstance(signed, dict):
            raise fail("signed: expected an object")
        if not isinstance(raw_signatures, list) or not raw_signatures:
            raise fail("signatures: expected a non-empty list")
        signatures: list[tuple[str, bytes]] = []
        for i, entry in enumerate(raw_signatures[:16]):
            if not isinstance(entry, dict):
                raise fail(f"signatures[{i}]: expected an object")
            kid = check_key_id(entry.get("key_id"), f"signatures[{i}].key_id", fail)
            try:
                sig = base64.b64decode(str(entry.get("signature")), validate=True)
            except (binascii.Error, ValueError):
                raise fail(f"signatures[{i}].signature: not base64") from None
            signatures.append((kid, sig))
        return cls(signed, tuple(signatures))

    @classmethod
    def from_json(cls, data: bytes, source: str) -> Envelope:
        if len(data) > MAX_TRUST_DOCUMENT_BYTES:
            raise TrustError(
                f"{source}: {len(data)} bytes, more than {MAX_TRUST_DOCUMENT_BYTES} for a trust "
                "document"
            )
        return cls.from_dict(parse_json_object(data, source, "trust document", TrustError), source)


def seal(signed: dict[str, Any], signer_key_id: str, sign: Callable[[bytes], bytes]) -> Envelope:
    """An envelope over `signed`, signed by `sign` (a private key's `sign`) as `signer_key_id`."""
    return Envelope(signed, ((signer_key_id, sign(signing_input(signed))),))


# ---- the two documents --------------------------------------------------------------
def _field(signed: Mapping[str, Any], name: str, kind: type, source: str) -> Any:
    value = signed.get(name)
    if isinstance(value, bool) and kind is not bool:
        value = None
    if not isinstance(value, kind):
        raise TrustError(f"{source}: signed.{name}: missing or not a {kind.__name__}")
    return value


def _signed_content(envelope: Envelope, kind: str, source: str) -> dict[str, Any]:
    """The signed content of `envelope`, once its header says it is a `kind` document of
    the spec this agent reads."""
    if envelope.kind != kind:
        raise TrustError(f"{source}: signed.type is {envelope.kind!r}, expected {kind!r}")
    spec = envelope.signed.get("spec")
    if spec != TRUST_SPEC:
        raise TrustError(
            f"{source}: signed.spec {spec!r}: this agent reads trust documents of spec "
            f"{TRUST_SPEC}; update trt-edge-runner"
        )
    return envelope.signed


@dataclass(frozen=True)
class Rotation:
    """Key `new_key_id` succeeds `old_key_id` (signed by the old key)."""

    old_key_id: str
    new_key_id: str
    new_public_key: bytes  # the 32 raw ed25519 bytes
    not_after: dt.datetime | None
    retire_old: bool
    issued_at: str
    envelope: Envelope

    @classmethod
    def parse(cls, envelope: Envelope, source: str) -> Rotation:
        signed = _signed_content(envelope, ROTATION_TYPE, source)
        fail = _error_at(source)
        old = check_key_id(signed.get("old_key_id"), "signed.old_key_id", fail)
        new_key = _field(signed, "new_key", dict, source)
        new = check_key_id(new_key.get("key_id"), "signed.new_key.key_id", fail)
        try:
            raw = base64.b64decode(str(new_key.get("public_key")), validate=True)
        except (binascii.Error, ValueError):
            raise fail("signed.new_key.public_key: not base64") from None
        if len(raw) != 32 or hashlib.sha256(raw).hexdigest() != new:
            raise fail(
                "signed.new_key: public_key is not the 32-byte ed25519 key whose sha256 is key_id"
            )
        if old == new:
            raise fail("a key cannot succeed itself")
        not_after_raw = new_key.get("not_after")
        not_after = (
            None
            if not_after_raw is None
            else parse_time(not_after_raw, "signed.new_key.not_after", fail)
        )
        retire = _field(signed, "retire_old", bool, source)
        issued = parse_time(signed.get("issued_at"), "signed.issued_at", fail)
        return cls(old, new, raw, not_after, retire, format_time(issued), envelope)

    def public_key(self) -> Ed25519PublicKey:
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

        return Ed25519PublicKey.from_public_bytes(self.new_public_key)


@dataclass(frozen=True)
class RevocationList:
    """Key ids no device may trust any more, with reasons; `version` only ever goes up."""

    version: int
    issued_at: str
    revoked: dict[str, str]
    envelope: Envelope

    @classmethod
    def parse(cls, envelope: Envelope, source: str) -> RevocationList:
        signed = _signed_content(envelope, REVOCATIONS_TYPE, source)
        fail = _error_at(source)
        version = _field(signed, "version", int, source)
        if version < 1:
            raise fail(f"signed.version: must be at least 1, got {version}")
        issued = parse_time(signed.get("issued_at"), "signed.issued_at", fail)
        raw = _field(signed, "revoked", dict, source)
        if len(raw) > MAX_REVOKED:
            raise fail(f"signed.revoked: more than {MAX_REVOKED} keys")
        revoked: dict[str, str] = {}
        for kid, reason in raw.items():
            check_key_id(kid, "signed.revoked key", fail)
            if not isinstance(reason, str):
                raise fail(f"signed.revoked[{kid[:16]}…]: the reason must be a string")
            revoked[kid] = reason
        return cls(version, format_time(issued), revoked, envelope)


def parse_trust_document(data: bytes, source: str) -> Rotation | RevocationList:
    """A rotation statement or a revocation list from its bytes (not yet verified)."""
    envelope = Envelope.from_json(data, source)
    if envelope.kind == ROTATION_TYPE:
        return Rotation.parse(envelope, source)
    if envelope.kind == REVOCATIONS_TYPE:
        return RevocationList.parse(envelope, source)
    raise TrustError(
        f"{source}: signed.type {envelope.kind!r} is not a trust document this agent reads "
        f"({ROTATION_TYPE!r} or {REVOCATIONS_TYPE!r})"
    )


# ---- the operator's local policy ----------------------------------------------------
@dataclass(frozen=True)
class LocalPolicy:
    not_after: dict[str, dt.datetime]
    revoked: dict[str, str]


def load_local_policy(keys_dir: Path) -> LocalPolicy:
    """`KEYS/keys.json` when it exists (no file: no dates, no local revocations)."""
    path = keys_dir / LOCAL_POLICY
    if not path.is_file():
        return LocalPolicy({}, {})
    data = read_file_bytes(path, "the local key policy", TrustConfigError)

    def fail(message: str) -> TrustConfigError:
        return TrustConfigError(f"{path}: {message}")

    doc = parse_json_object(data, str(path), "local key policy", TrustConfigError)
    unknown = set(doc) - {"not_after", "revoked"}
    if unknown:
        raise fail(f"unknown field(s) {sorted(unknown)}; expected not_after, revoked")
    dates, revoked = doc.get("not_after", {}), doc.get("revoked", {})
    if not isinstance(dates, dict) or not isinstance(revoked, dict):
        raise fail('not_after and revoked are objects keyed by key id: {"<key id>": ...}')
    not_after = {
        check_key_id(kid, "not_after key", fail): parse_time(when, f"not_after[{kid[:16]}…]", fail)
        for kid, when in dates.items()
    }
    reasons: dict[str, str] = {}
    for kid, reason in revoked.items():
        reasons[check_key_id(kid, "revoked key", fail)] = str(reason)
    return LocalPolicy(not_after, reasons)


# ---- the store ------------------------------------------------------------------------
@dataclass(frozen=True)
class KnownKey:
    key_id: str
    public_key: Ed25519PublicKey
    origin: str  # "anchor KEYS/x.pub" or "rotated in from <old id>"
    not_after: dt.datetime | None = None
    retired_by: str | None = None
    retired_at: str | None = None


class TrustStore:
    """Every key this device knows, with its status now; built by `load_trust_store`."""

    def __init__(
        self,
        keys_dir: Path,
        keys: dict[str, KnownKey],
        revoked: dict[str, str],
        record: TrustRecord,
        now: dt.datetime,
        dropped: dict[str, str],
    ) -> None:
        self.keys_dir = keys_dir
        self.keys = keys
        self.revoked = revoked  # key id -> "reason; where it was revoked"
        self.record = record
        self.now = now
        self.dropped = dropped  # key id -> why a stored rotation no longer counts

    def status(self, kid: str) -> KeyStatus:
        if kid in self.revoked:
            return KeyStatus(KeyState.REVOKED, f"is revoked ({self.revoked[kid]})")
        known = self.keys.get(kid)
        if known is None:
            why = self.dropped.get(kid)
            return KeyStatus(
                KeyState.UNKNOWN,
                f"is not trusted here ({why})" if why else "is not trusted here",
            )
        if known.retired_by is not None:
            return KeyStatus(
                KeyState.RETIRED,
                f"was retired on {known.retired_at} by the rotation to key {known.retired_by}",
            )
        if known.not_after is not None and self.now > known.not_after:
            return KeyStatus(
                KeyState.EXPIRED,
                f"expired on {format_time(known.not_after)} (this device's clock says "
                f"{format_time(self.now)})",
            )
        return KeyStatus(KeyState.TRUSTED, "is trusted")

    def trusted_ids(self) -> list[str]:
        return sorted(k for k in self.keys if self.status(k).state is KeyState.TRUSTED)

    def signing_key(self, kid: str, source: str, what: str = "signed") -> Ed25519PublicKey:
        """The public key of `kid` if it is trusted now, else TrustError naming it and why."""
        status = self.status(kid)
        if status.state is KeyState.TRUSTED:
            return self.keys[kid].public_key
        hints = {
            KeyState.UNKNOWN: (
                f"add the publisher's {PUBLIC_KEY_SUFFIX} to {self.keys_dir}, or accept a rotation "
                "statement signed by a trusted key (`trt-edge-device trust add`)"
            ),
            KeyState.RETIRED: "re-sign it with the key that succeeded this one",
            KeyState.EXPIRED: "re-sign it with a current key (`trt-edge keys rotate`)",
            KeyState.REVOKED: "re-sign it with a key that is not revoked",
        }
        trusted = ", ".join(self.trusted_ids()) or "none"
        raise TrustError(
            f"{source}: {what} by key {kid}, which {status.reason}; trusted here: {trusted}",
            hint=hints[status.state],
        )

    def verify_bundle(self, document: bytes, signature: DetachedSignature, source: str) -> None:
        """Refuse `document` (bundle.json bytes) unless a key trusted now signed it."""
        check_signature(self.signing_key(signature.key_id, source), signature, document, source)

    def verify_installed(self, document: bytes, signature: DetachedSignature, source: str) -> None:
        """Refuse to go back to an installed bundle (rollback) whose key is revoked or no longer
        known here, or whose signature does not verify. A retired or expired key is fine: the
        bundle was accepted while the key was valid, and neither means it was compromised."""
        status = self.status(signature.key_id)
        if status.state in (KeyState.REVOKED, KeyState.UNKNOWN):
            raise TrustError(
                f"{source}: signed by key {signature.key_id}, which {status.reason}",
                hint="install a bundle signed by a trusted key instead",
            )
        public_key = self.keys[signature.key_id].public_key
        check_signature(public_key, signature, document, source, since="installing")

    def _trusted_signer(self, envelope: Envelope, source: str, what: str) -> str:
        """The id of a trusted key whose signature on `envelope` verifies, else TrustError."""
        for kid, _sig in envelope.signatures:
            if self.status(kid).state is KeyState.TRUSTED and envelope.signed_by(
                kid, self.keys[kid].public_key
            ):
                return kid
        kid = envelope.signatures[0][0]
        self.signing_key(kid, source, what)  # raises, naming why the key is refused
        raise TrustError(f"{source}: the signature by key {kid} does not match the document")

    def accept(self, document: Rotation | RevocationList, source: str) -> tuple[TrustRecord, str]:
        """The trust record with `document` accepted, and what changed; TrustError if refused.

        Accepting the same document again changes nothing (the record comes back as is).
        """
        if isinstance(document, Rotation):
            return self._accept_rotation(document, source)
        return self._accept_revocations(document, source)

    def _accept_rotation(self, rotation: Rotation, source: str) -> tuple[TrustRecord, str]:
        envelope = rotation.envelope
        for stored in self.record.rotations:
            if Envelope.from_dict(stored, "state.json").content_sha256 == envelope.content_sha256:
                return self.record, f"rotation to key {rotation.new_key_id} already accepted"
        signer = rotation.old_key_id
        if not any(kid == signer for kid, _ in envelope.signatures):
            raise TrustError(
                f"{source}: a rotation must be signed by the key it succeeds ({signer}); "
                f"it is signed by {', '.join(k for k, _ in envelope.signatures)}"
            )
        public_key = self.signing_key(signer, source, "rotation signed")
        if not envelope.signed_by(signer, public_key):
            raise TrustError(f"{source}: the signature by key {signer} does not match the document")
        if rotation.new_key_id in self.revoked:
            raise TrustError(
                f"{source}: the new key {rotation.new_key_id} is revoked "
                f"({self.revoked[rotation.new_key_id]}); it cannot be rotated in"
            )
        if rotation.new_key_id in self.keys:
            raise TrustError(
                f"{source}: key {rotation.new_key_id} is already known here "
                f"({self.keys[rotation.new_key_id].origin}); a key is rotated in once"
            )
        record = replace(self.record, rotations=(*self.record.rotations, envelope.to_dict()))
        retired = f"; key {signer} is retired" if rotation.retire_old else ""
        return record, f"key {rotation.new_key_id} trusted, succeeding key {signer}{retired}"

    def _accept_revocations(self, listing: RevocationList, source: str) -> tuple[TrustRecord, str]:
        envelope = listing.envelope
        record = self.record
        current = record.revocations_version
        stored = None if record.revocations is None else Envelope.from_dict(record.revocations, "")
        if stored is not None and listing.version == current:
            if stored.content_sha256 == envelope.content_sha256:
                return record, f"revocation list version {current} already accepted"
            raise TrustError(
                f"{source}: revocation list version {listing.version} differs from the version "
                f"{current} this device accepted (same version, other content)",
                hint="publish changes under a higher version (`trt-edge keys revoke` does)",
            )
        signer = self._trusted_signer(envelope, source, "revocation list signed")
        if stored is not None and listing.version < current:
            stored_signers = {kid for kid, _ in stored.signatures}
            if not stored_signers & set(listing.revoked):
                raise TrustError(
                    f"{source}: revocation list version {listing.version} is older than version "
                    f"{current}, which this device already accepted (rolled back)",
                    hint="send the newest revocation list; older ones are never accepted again",
                )
        kept = sorted(set(record.revoked) - set(listing.revoked))
        if kept:
            raise TrustError(
                f"{source}: revocation list version {listing.version} omits key(s) "
                f"{', '.join(kept)} that an earlier list revoked; revocations are permanent",
                hint="build the new list on the previous one (`trt-edge keys revoke --list`)",
            )
        new = sorted(set(listing.revoked) - set(record.revoked))
        record = replace(
            record,
            revocations=envelope.to_dict(),
            revocations_version=listing.version,
            revoked={**record.revoked, **listing.revoked},
        )
        what = f"revoked {', '.join(new)}" if new else "no new keys revoked"
        return record, f"revocation list version {listing.version} (signed by {signer}): {what}"

    def describe(self) -> list[dict[str, Any]]:
        """Every key known (and every key revoked), for `trust status --json`."""
        ids = sorted(set(self.keys) | set(self.revoked))
        rows: list[dict[str, Any]] = []
        for kid in ids:
            known = self.keys.get(kid)
            status = self.status(kid)
            rows.append(
                {
                    "key_id": kid,
                    "status": status.state.value,
                    "reason": status.reason,
                    "origin": known.origin if known else None,
                    "not_after": format_time(known.not_after)
                    if known and known.not_after
                    else None,
                }
            )
        return rows


def load_anchors(keys_dir: Path) -> dict[str, tuple[Ed25519PublicKey, Path]]:
    """Every `*.pub` of the keys directory by key id; an empty or missing directory trusts
    nothing, which is refused (every install would be)."""
    if not keys_dir.is_dir():
        raise SignatureError(
            f"{keys_dir}: trusted keys directory does not exist; copy the publisher's "
            f"{PUBLIC_KEY_SUFFIX} file there"
        )
    anchors: dict[str, tuple[Ed25519PublicKey, Path]] = {}
    for path in sorted(keys_dir.glob(f"*{PUBLIC_KEY_SUFFIX}")):
        key = load_public_key(path)
        anchors[key_id(key)] = (key, path)
    if not anchors:
        raise SignatureError(
            f"{keys_dir}: no {PUBLIC_KEY_SUFFIX} files, so no bundle can be trusted; "
            "copy the publisher's public key there"
        )
    return anchors


def load_trust_store(
    keys_dir: Path, record: TrustRecord, now: dt.datetime | None = None
) -> TrustStore:
    """The trust store of a device: its anchors and local policy, then the accepted documents
    of `record`, each re-verified in the order it was accepted."""
    anchors = load_anchors(keys_dir)
    policy = load_local_policy(keys_dir)
    revoked = {kid: f"{why}; {keys_dir / LOCAL_POLICY}" for kid, why in policy.revoked.items()}
    list_version = record.revocations_version
    for kid, why in record.revoked.items():
        revoked.setdefault(kid, f"{why}; revocation list v{list_version}")
    keys: dict[str, KnownKey] = {
        kid: KnownKey(kid, key, f"anchor {path}", policy.not_after.get(kid))
        for kid, (key, path) in anchors.items()
    }
    dropped: dict[str, str] = {}
    for stored in _stored_rotations(record.rotations):
        signer = keys.get(stored.old_key_id)
        new = stored.new_key_id
        if stored.old_key_id in revoked or signer is None:
            state = "revoked" if stored.old_key_id in revoked else "no longer known here"
            dropped[new] = f"it was rotated in by key {stored.old_key_id}, which is {state}"
            continue
        if not stored.envelope.signed_by(stored.old_key_id, signer.public_key):
            dropped[new] = "its rotation statement in state.json does not verify"
            continue
        if new not in keys:
            dates = [d for d in (stored.not_after, policy.not_after.get(new)) if d is not None]
            keys[new] = KnownKey(
                new,
                stored.public_key(),
                f"rotated in from key {stored.old_key_id}",
                min(dates) if dates else None,
            )
        if stored.retire_old:
            keys[stored.old_key_id] = replace(signer, retired_by=new, retired_at=stored.issued_at)
    return TrustStore(keys_dir, keys, revoked, record, now or now_utc(), dropped)


def _stored_rotations(raw: Iterable[dict[str, Any]]) -> list[Rotation]:
    return [Rotation.parse(Envelope.from_dict(doc, "state.json"), "state.json") for doc in raw]
