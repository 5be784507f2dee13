"""Verify a bundle's detached ed25519 signature and its file list, on the device.

What is signed: the exact bytes of `bundle.json`, which must be canonical
(`bundle_format.canonical_json` of its own parsed content: sorted keys, no
spaces, UTF-8, one trailing newline). Signing the file bytes rather than a
re-serialisation means there is no second encoder whose output could drift from
the writer's; requiring canonical bytes means two bundles with the same content
carry the same signature and whitespace cannot smuggle in a difference.
`bundle.json` lists the sha256 and size of every other file, so one signature
covers the whole directory: a verified document plus matching files (none
missing, none extra, no links) is a verified bundle.

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
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trt_edge_runner.bundle_format import (
    BUNDLE_JSON,
    BUNDLE_SIG,
    UNLISTED_FILES,
    BundleFormatError,
    BundleManifest,
    canonical_json,
    file_sha256,
)
from trt_edge_runner.errors import TrtEdgeError

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

SIGNATURE_ALGORITHM = "ed25519"
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
        try:
            doc = json.loads(data)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise SignatureError(f"{source}: not a trt-edge signature document: {exc}") from None
        if not isinstance(doc, dict):
            raise SignatureError(f"{source}: expected a JSON object")
        fields: dict[str, str] = {}
        for key in ("algorithm", "key_id", "signature"):
            value = doc.get(key)
            if not isinstance(value, str):
                raise SignatureError(f"{source}: field {key!r} missing or not a string")
            fields[key] = value
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


def load_public_key(path: Path) -> Ed25519PublicKey:
    """Read a PEM SubjectPublicKeyInfo ed25519 key, refusing anything else by name."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SignatureError(f"{path}: cannot read public key: {exc.strerror}") from None
    try:
        key = serialization.load_pem_public_key(data)
    except ValueError:
        raise SignatureError(
            f"{path}: not a PEM public key; use a .pub file written by `trt-edge keys generate`"
        ) from None
    if not isinstance(key, Ed25519PublicKey):
        raise SignatureError(f"{path}: is a {type(key).__name__}, expected an ed25519 public key")
    return key


def load_trusted_keys(directory: Path) -> dict[str, Ed25519PublicKey]:
    """Every `*.pub` in `directory`, by key id. An empty or missing directory trusts nothing."""
    if not directory.is_dir():
        raise SignatureError(
            f"{directory}: trusted keys directory does not exist; copy the publisher's "
            f"{PUBLIC_KEY_SUFFIX} file there"
        )
    keys: dict[str, Ed25519PublicKey] = {}
    for path in sorted(directory.glob(f"*{PUBLIC_KEY_SUFFIX}")):
        key = load_public_key(path)
        keys[key_id(key)] = key
    if not keys:
        raise SignatureError(
            f"{directory}: no {PUBLIC_KEY_SUFFIX} files, so no bundle can be trusted; "
            "copy the publisher's public key there"
        )
    return keys


def read_canonical_manifest(bundle_dir: Path) -> tuple[bytes, BundleManifest]:
    """The bytes of `bundle.json` (which must be canonical) and the manifest they describe."""
    path = bundle_dir / BUNDLE_JSON
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise SignatureError(f"{path}: missing; this directory is not a bundle") from None
    return data, parse_canonical_manifest(data, str(path))


def _parse_manifest(data: bytes, source: str) -> BundleManifest:
    try:
        return BundleManifest.from_json(data, source=source)
    except BundleFormatError as exc:
        raise SignatureError(str(exc)) from None
    except UnicodeDecodeError as exc:
        raise SignatureError(f"{source}: not UTF-8: {exc}") from None


def check_files(bundle_dir: Path, manifest: BundleManifest) -> None:
    """Every listed file present with its size and sha256; nothing unlisted; no links.

    Collects every problem before raising so the operator sees the whole damage.
    """
    problems: list[str] = []
    present: set[str] = set()
    for root, dirs, files in os.walk(bundle_dir):
        root_path = Path(root)
        for name in [*dirs, *files]:
            path = root_path / name
            rel = path.relative_to(bundle_dir).as_posix()
            if path.is_symlink():
                problems.append(f"{rel}: is a symbolic link; bundles contain regular files only")
            elif path.is_file():
                present.add(rel)
            elif not path.is_dir():
                problems.append(f"{rel}: is not a regular file")
    for rel in sorted(present - set(manifest.files) - UNLISTED_FILES):
        problems.append(f"{rel}: extra file not listed in {BUNDLE_JSON}")
    for rel, entry in sorted(manifest.files.items()):
        if rel not in present:
            problems.append(f"{rel}: listed in {BUNDLE_JSON} but missing")
            continue
        path = bundle_dir / rel
        size = path.stat().st_size
        if size != entry.size:
            problems.append(f"{rel}: size {size} bytes, {BUNDLE_JSON} says {entry.size}")
            continue
        actual = file_sha256(path)
        if actual != entry.sha256:
            problems.append(
                f"{rel}: sha256 {actual[:16]}… does not match {BUNDLE_JSON} ({entry.sha256[:16]}…)"
            )
    if problems:
        raise SignatureError(f"{bundle_dir}: refused:\n  " + "\n  ".join(problems))


def read_signature(bundle_dir: Path) -> DetachedSignature:
    path = bundle_dir / BUNDLE_SIG
    try:
        data = path.read_bytes()
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
    """Refuse `document` (the bytes of a `bundle.json`) unless a trusted key signed it.

    Split from `verify_bundle` so the device agent can check the signature of a
    bundle still inside its `.tar`, before extracting a single byte of it.
    """
    from cryptography.exceptions import InvalidSignature

    public_key = trusted.get(signature.key_id)
    if public_key is None:
        raise SignatureError(
            f"{source}: signed by key {signature.key_id[:16]}…, which is not trusted here "
            f"(trusted: {', '.join(k[:16] + '…' for k in sorted(trusted)) or 'none'}); "
            "add the publisher's .pub to the trusted keys directory or re-sign the bundle"
        )
    try:
        public_key.verify(signature.signature, document)
    except InvalidSignature:
        raise SignatureError(
            f"{source}: signature does not match its content "
            "(bundle.json changed after signing, or bundle.sig is corrupt)"
        ) from None


def parse_canonical_manifest(data: bytes, source: str) -> BundleManifest:
    """Parse `bundle.json` bytes, refusing a document that is not byte-for-byte canonical."""
    manifest = _parse_manifest(data, source)
    if canonical_json(json.loads(data)) != data:
        raise SignatureError(
            f"{source}: not in canonical form (sorted keys, no spaces, one trailing newline); "
            "it was edited after the build: rebuild the bundle"
        )
    return manifest


def verify_bundle(bundle_dir: Path, trusted: Mapping[str, Ed25519PublicKey]) -> BundleManifest:
    """Refuse the bundle unless a trusted key signed its `bundle.json` and every file matches.

    Order matters: the signature is checked before the file list is trusted, so
    an attacker cannot make the device hash arbitrary paths it names.
    """
    document, manifest = read_canonical_manifest(bundle_dir)
    signature = read_signature(bundle_dir)
    verify_document(document, signature, trusted, str(bundle_dir / BUNDLE_JSON))
    check_files(bundle_dir, manifest)
    return manifest


def describe(manifest: BundleManifest) -> dict[str, Any]:
    """What a verified bundle is, for reports."""
    return {"name": manifest.name, "version": manifest.version, "files": len(manifest.files)}
