"""Verify a bundle's detached ed25519 signature and its file list, on the device.

What is signed: the exact bytes of `bundle.json`, which must be canonical
(`bundle_format.canonical_json` of its own parsed content: sorted keys, no
spaces, UTF-8, one trailing newline). Signing the file bytes rather than a
re-serialisation means there is no second encoder whose output could drift from
the writer's; requiring canonical bytes means two bundles with the same content
carry the same signature and whitespace cannot smuggle in a difference.
`bundle.json` lists the sha256 and size of every other file, so one signature
covers the whole directory: a verified document plus a directory that keeps the
integrity rule (`bundle_integrity`: none missing, none extra, no links, sizes
and digests as listed) is a verified bundle.

`bundle.sig` is a small JSON document naming the algorithm, the signing key's id
(sha256 of the raw public key, hex) and the base64 signature, so a device with
several trusted keys knows which one to use and can say "signed by an untrusted
key" instead of a bare "bad signature".

Needs `cryptography` (the runner's `[agent]` extra); imported inside functions
so reading bundles does not need it.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trt_edge_runner.bundle_format import BUNDLE_JSON, BUNDLE_SIG, BundleManifest, canonical_json
from trt_edge_runner.bundle_integrity import (
    parse_manifest,
    read_document,
    read_manifest,
    verify_directory,
)
from trt_edge_runner.errors import BundleFormatMismatchError, TrtEdgeError
from trt_edge_runner.json_documents import parse_json_object, read_file_bytes

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

SIGNATURE_ALGORITHM = "ed25519"
# A key id: sha256 of the raw public key, lowercase hex (use with fullmatch).
KEY_ID_PATTERN = re.compile(r"[0-9a-f]{64}")
PUBLIC_KEY_SUFFIX = ".pub"


class SignatureError(TrtEdgeError):
    """The bundle is refused; the message says which file and why."""


@dataclass(frozen=True)
class DetachedSignature:
    """The parsed content of `bundle.sig`."""

    algorithm: str
    key_id: str
    signature: bytes

    def to_json(self) -> bytes:
        return canonical_json(
            {
                "algorithm": self.algorithm,
                "key_id": self.key_id,
                "signature": base64.b64encode(self.signature).decode("ascii"),
            }
        )

    @classmethod
    def from_json(cls, data: bytes, source: str) -> DetachedSignature:
        doc = parse_json_object(data, source, "signature document", SignatureError)
        fields: dict[str, str] = {}
        for key in ("algorithm", "key_id", "signature"):
            value = doc.get(key)
            if not isinstance(value, str):
                raise SignatureError(f"{source}: field {key!r} missing or not a string")
            fields[key] = value
        if not KEY_ID_PATTERN.fullmatch(fields["key_id"]):
            raise SignatureError(
                f"{source}: field 'key_id' is not a key id (64 lowercase hex digits: the "
                "sha256 of the raw public key)"
            )
        if fields["algorithm"] != SIGNATURE_ALGORITHM:
            raise SignatureError(
                f"{source}: algorithm {fields['algorithm']!r} is not supported "
                f"(only {SIGNATURE_ALGORITHM!r})"
            )
        try:
            raw = base64.b64decode(fields["signature"], validate=True)
        except ValueError:
            raise SignatureError(f"{source}: field 'signature' is not base64") from None
        return cls(algorithm=fields["algorithm"], key_id=fields["key_id"], signature=raw)


def key_id(public_key: Ed25519PublicKey) -> str:
    """A stable name for a public key: sha256 of its 32 raw bytes, hex."""
    from cryptography.hazmat.primitives import serialization

    raw = public_key.public_bytes(
        encoding=serialization.Encoding.Raw, format=serialization.PublicFormat.Raw
    )
    return hashlib.sha256(raw).hexdigest()


def load_pem_key(
    path: Path,
    what: str,
    load: Callable[[bytes], object],
    expected: type[Any],
    hint: str,
    error: Callable[[str], Exception],
) -> Any:
    """The ed25519 `what` (public or private key) in the PEM file `path`, else `error(...)`.

    One reader for both halves of a key pair: the device's trusted `.pub` files
    (SignatureError) and the host's signing `.key` (SigningError, exit 2).
    """
    data = read_file_bytes(path, what, error)
    try:
        key = load(data)
    except (ValueError, TypeError):
        raise error(f"{path}: {hint}") from None
    if not isinstance(key, expected):
        raise error(f"{path}: is a {type(key).__name__}, expected an ed25519 {what}")
    return key


def load_public_key(path: Path) -> Ed25519PublicKey:
    """Read a PEM SubjectPublicKeyInfo ed25519 key, refusing anything else by name."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    key: Ed25519PublicKey = load_pem_key(
        path,
        "public key",
        serialization.load_pem_public_key,
        Ed25519PublicKey,
        "not a PEM public key; use a .pub file written by `trt-edge keys generate`",
        SignatureError,
    )
    return key


def read_canonical_manifest(bundle_dir: Path) -> tuple[bytes, BundleManifest]:
    """The bytes of `bundle.json` (which must be canonical) and the manifest they describe.

    Read by the one `bundle.json` reader (`bundle_integrity.read_manifest`: no link,
    no special file, size-capped); its errors pass through unchanged.
    """
    data, manifest = read_manifest(bundle_dir)
    _require_canonical(data, str(bundle_dir / BUNDLE_JSON))
    return data, manifest


def read_signature(bundle_dir: Path) -> DetachedSignature:
    """`bundle.sig`, read like `bundle.json` (no link, no special file, size-capped)."""
    path = bundle_dir / BUNDLE_SIG
    try:
        data = read_document(bundle_dir, BUNDLE_SIG)
    except FileNotFoundError:
        raise SignatureError(
            f"{path}: missing; the bundle is unsigned: sign it with `trt-edge sign`"
        ) from None
    return DetachedSignature.from_json(data, str(path))


def verify_document(
    document: bytes,
    signature: DetachedSignature,
    trusted: Mapping[str, Ed25519PublicKey],
    source: str,
) -> None:
    """Refuse `document` (the bytes of a `bundle.json`) unless a key of `trusted` signed it.

    The host's check (`trt-edge verify`, `sign`), against the keys it is given; a device
    asks its trust store (`trust.TrustStore.verify_bundle`), which knows rotations,
    expiry and revocations. Both end in `check_signature`.
    """
    public_key = trusted.get(signature.key_id)
    if public_key is None:
        raise SignatureError(
            f"{source}: signed by key {signature.key_id[:16]}…, which is not trusted here "
            f"(trusted: {', '.join(k[:16] + '…' for k in sorted(trusted)) or 'none'}); "
            "add the publisher's .pub to the trusted keys directory or re-sign the bundle"
        )
    check_signature(public_key, signature, document, source)


def check_signature(
    public_key: Ed25519PublicKey,
    signature: DetachedSignature,
    document: bytes,
    source: str,
    since: str = "signing",
) -> None:
    """Refuse `document` unless `signature` verifies under `public_key` (the key already
    chosen as trusted); the message says the file changed `since` signing or installing."""
    from cryptography.exceptions import InvalidSignature

    try:
        public_key.verify(signature.signature, document)
    except InvalidSignature:
        raise SignatureError(
            f"{source}: signature does not match its content "
            f"(bundle.json changed after {since}, or bundle.sig is corrupt)"
        ) from None


def parse_canonical_manifest(data: bytes, source: str) -> BundleManifest:
    """Parse `bundle.json` bytes, refusing a document that is not byte-for-byte canonical.

    Every refusal is a SignatureError here: this is how a device reads a document
    it has not extracted yet (the agent, the fleet's result reader).
    """
    try:
        manifest = parse_manifest(data, source)
    except BundleFormatMismatchError as exc:
        raise SignatureError(str(exc)) from None
    _require_canonical(data, source)
    return manifest


def _require_canonical(data: bytes, source: str) -> None:
    if canonical_json(json.loads(data)) != data:
        raise SignatureError(
            f"{source}: not in canonical form (sorted keys, no spaces, one trailing newline); "
            "it was edited after the build: rebuild the bundle"
        )


def verify_bundle(bundle_dir: Path, trusted: Mapping[str, Ed25519PublicKey]) -> BundleManifest:
    """Refuse the bundle unless a trusted key signed its `bundle.json` and every file matches.

    Order matters: the signature is checked before the file list is trusted, so
    an attacker cannot make the device hash arbitrary paths it names.
    """
    document, manifest = read_canonical_manifest(bundle_dir)
    signature = read_signature(bundle_dir)
    verify_document(document, signature, trusted, str(bundle_dir / BUNDLE_JSON))
    verify_directory(bundle_dir, manifest)
    return manifest
