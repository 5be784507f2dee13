"""Write the trust documents devices accept (`trt_edge_runner.trust`): a rotation statement that
moves a fleet from one signing key to the next, and a versioned revocation list.

The formats and the rules a device applies live in the device package; this side only
makes the documents and signs them, so host and device cannot disagree on the bytes:
both use `trt_edge_runner.trust.seal` / `Envelope`.
"""

from __future__ import annotations

import base64
import datetime as dt
from dataclasses import dataclass
from pathlib import Path

from trt_edge_runner.durable import write_atomic
from trt_edge_runner.signature import PUBLIC_KEY_SUFFIX, SignatureError, key_id, load_public_key
from trt_edge_runner.trust import (
    REVOCATIONS_TYPE,
    ROTATION_TYPE,
    TRUST_SPEC,
    Envelope,
    RevocationList,
    TrustError,
    check_key_id,
    format_time,
    now_utc,
    seal,
)

from trt_edge.signing.errors import SigningError
from trt_edge.signing.keys import PRIVATE_KEY_SUFFIX, generate_keypair, load_private_key

ROTATION_SUFFIX = ".rotation.json"


def parse_not_after(text: str) -> dt.datetime:
    """`2027-12-31` (the end of that day, UTC) or `2027-12-31T12:00:00Z`, else SigningError."""
    for form, end_of_day in (("%Y-%m-%d", True), ("%Y-%m-%dT%H:%M:%SZ", False)):
        try:
            moment = dt.datetime.strptime(text, form).replace(tzinfo=dt.timezone.utc)  # noqa: UP017
        except ValueError:
            continue
        return moment.replace(hour=23, minute=59, second=59) if end_of_day else moment
    raise SigningError(
        f"--not-after {text!r}: expected a date (2027-12-31) or a UTC time (2027-12-31T12:00:00Z)"
    )


@dataclass(frozen=True)
class RotationResult:
    private_path: Path
    public_path: Path
    statement_path: Path
    old_key_id: str
    new_key_id: str
    retire_old: bool


def rotate_key(
    current_key: Path,
    new: Path,
    *,
    not_after: dt.datetime | None = None,
    retire_old: bool = True,
    force: bool = False,
) -> RotationResult:
    """Make the key pair `NEW.key`/`NEW.pub` and `NEW.rotation.json`, signed by `current_key`.

    `new` is a path stem (`keys/2027` → `keys/2027.key`, `.pub`, `.rotation.json`). A
    device that trusts the current key accepts the new one once it has the statement
    (`trt-edge-device trust add`, or a rollout plan's `trust:`); with `retire_old` the
    device then refuses bundles the current key signs.
    """
    from cryptography.hazmat.primitives import serialization

    old = load_private_key(current_key)
    old_id = key_id(old.public_key())
    for suffix in (PRIVATE_KEY_SUFFIX, PUBLIC_KEY_SUFFIX):
        if new.name.endswith(suffix):
            raise SigningError(
                f"--new {new}: give a name stem without {suffix}; "
                f"{new.with_suffix('')}.key/.pub/.rotation.json are written"
            )
    statement_path = new.with_name(f"{new.name}{ROTATION_SUFFIX}")
    if statement_path.exists() and not force:
        raise SigningError(
            f"{statement_path}: already exists; refusing to overwrite (pass --force)"
        )
    pair = generate_keypair(new.parent, name=new.name, force=force)
    public = load_public_key(pair.public_path)
    raw = public.public_bytes(
        encoding=serialization.Encoding.Raw, format=serialization.PublicFormat.Raw
    )
    signed = {
        "type": ROTATION_TYPE,
        "spec": TRUST_SPEC,
        "old_key_id": old_id,
        "new_key": {
            "key_id": pair.key_id,
            "public_key": base64.b64encode(raw).decode("ascii"),
            "not_after": None if not_after is None else format_time(not_after),
        },
        "retire_old": retire_old,
        "issued_at": format_time(now_utc()),
    }
    envelope = seal(signed, old_id, old.sign)
    write_atomic(statement_path, envelope.to_json())
    return RotationResult(
        pair.private_path, pair.public_path, statement_path, old_id, pair.key_id, retire_old
    )


def resolve_key_id(text: str) -> str:
    """A key id from `text`: 64 hex digits, or the path of a `.pub` (or `.key`) file."""
    lowered = text.lower()
    if len(lowered) == 64 and all(c in "0123456789abcdef" for c in lowered):
        return lowered
    path = Path(text)
    if path.suffix == PRIVATE_KEY_SUFFIX:
        return key_id(load_private_key(path).public_key())
    if path.exists():
        try:
            return key_id(load_public_key(path))
        except SignatureError as exc:
            raise SigningError(str(exc)) from None
    raise SigningError(f"{text!r}: neither a key id (64 hex digits) nor a {PUBLIC_KEY_SUFFIX} file")


@dataclass(frozen=True)
class RevocationResult:
    path: Path
    version: int
    revoked: dict[str, str]
    added: list[str]
    signer_key_id: str


def revoke_keys(
    signer_key: Path, list_path: Path, keys: list[str], reason: str
) -> RevocationResult:
    """Write `list_path` as the next version of the revocation list, revoking `keys` too.

    The previous list at `list_path` (if any) is the base: every key it revoked stays
    revoked (devices refuse a list that drops one) and the version goes up by one
    (devices refuse an older or a same-version-other-content list).
    """
    signer = load_private_key(signer_key)
    signer_id = key_id(signer.public_key())
    previous: dict[str, str] = {}
    version = 0
    if list_path.exists():
        try:
            listing = RevocationList.parse(
                Envelope.from_json(list_path.read_bytes(), str(list_path)), str(list_path)
            )
        except TrustError as exc:
            raise SigningError(
                f"{exc}; --list must be the previous revocation list (or a new path)"
            ) from None
        except OSError as exc:
            raise SigningError(f"{list_path}: cannot read: {exc.strerror}") from None
        previous, version = dict(listing.revoked), listing.version
    ids = [resolve_key_id(text) for text in keys]
    for kid in ids:
        check_key_id(kid, "key", SigningError)
    added = [kid for kid in ids if kid not in previous]
    revoked = {**previous, **{kid: reason for kid in added}}
    signed = {
        "type": REVOCATIONS_TYPE,
        "spec": TRUST_SPEC,
        "version": version + 1,
        "issued_at": format_time(now_utc()),
        "revoked": revoked,
    }
    envelope = seal(signed, signer_id, signer.sign)
    try:
        list_path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(list_path, envelope.to_json())
    except OSError as exc:
        raise SigningError(f"{list_path}: cannot write: {exc.strerror}") from None
    return RevocationResult(list_path, version + 1, revoked, added, signer_id)
