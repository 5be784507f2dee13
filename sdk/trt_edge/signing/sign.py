"""Sign a bundle directory (write `bundle.sig`) and verify one against a single public key.

Signing refuses a bundle that breaks the integrity rule (`trt_edge_runner.bundle_integrity`:
files missing, extra, linked, special, oversized or differing from `bundle.json`), naming
every such file, and one whose version devices cannot order (`trt_edge_runner.versions`):
a signature is a statement that this exact directory is good, so it is only made over a
directory a device would accept.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from trt_edge_runner.bundle_format import BUNDLE_JSON, BUNDLE_SIG, BundleManifest
from trt_edge_runner.bundle_integrity import verify_directory
from trt_edge_runner.durable import write_atomic
from trt_edge_runner.errors import RunnerError
from trt_edge_runner.signature import (
    SIGNATURE_ALGORITHM,
    DetachedSignature,
    SignatureError,
    key_id,
    load_public_key,
    read_canonical_manifest,
    read_signature,
    verify_bundle,
    verify_document,
)
from trt_edge_runner.versions import VersionError, parse_version

from trt_edge.signing.errors import SigningError
from trt_edge.signing.keys import load_private_key

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey


def _bundle_dir(path: Path) -> Path:
    if not path.is_dir():
        raise SigningError(f"{path}: not a bundle directory (expected model.pte and bundle.json)")
    return path


def sign_bundle(bundle: Path, key_path: Path) -> DetachedSignature:
    """Write `BUNDLE/bundle.sig` (atomically) signing the canonical `bundle.json`."""
    bundle_dir = _bundle_dir(bundle)
    key = load_private_key(key_path)
    try:
        document, manifest = read_canonical_manifest(bundle_dir)
        verify_directory(bundle_dir, manifest)
        parse_version(manifest.version, f"{manifest.name} version")
    except (SignatureError, RunnerError, VersionError) as exc:
        # RunnerError: bundle.json unreadable (format) or the integrity rule broken;
        # VersionError: devices could not order its version (anti-rollback).
        exc.hint = (
            "nothing was signed: a bundle is signed only when every file matches "
            "bundle.json and its version is MAJOR.MINOR.PATCH[-PRE]; rebuild it, or restore "
            "the file"
        )
        raise
    signature = DetachedSignature(
        algorithm=SIGNATURE_ALGORITHM,
        key_id=key_id(key.public_key()),
        signature=key.sign(document),
    )
    write_atomic(bundle_dir / BUNDLE_SIG, signature.to_json())
    return signature


def _one_key(public_key_path: Path) -> dict[str, Ed25519PublicKey]:
    """The trusted set `{key id: key}` of one public key file; SigningError (exit 2) if
    the file cannot be used."""
    try:
        public_key = load_public_key(public_key_path)
    except SignatureError as exc:
        raise SigningError(str(exc)) from None
    return {key_id(public_key): public_key}


def verify_bundle_with(bundle: Path, public_key_path: Path) -> BundleManifest:
    """Verify `bundle` against one public key; a `SignatureError` (exit 1) names the reason.

    A key file that cannot be used is a `SigningError` (exit 2).
    """
    bundle_dir = _bundle_dir(bundle)
    return verify_bundle(bundle_dir, _one_key(public_key_path))


def verify_signature_with(bundle: Path, document: bytes, public_key_path: Path) -> None:
    """Only the signature check of `verify_bundle_with`, for a caller that has already read
    `document` (the bundle's `bundle.json` bytes) and hashed its files."""
    verify_document(
        document, read_signature(bundle), _one_key(public_key_path), str(bundle / BUNDLE_JSON)
    )
