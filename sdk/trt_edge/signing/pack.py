"""`trt-edge pack`: a bundle directory as the deterministic transport `.tar` devices install.

What devices refuse is refused here first, so a bad bundle never reaches a fleet: the
integrity rule (`trt_edge_runner.bundle_integrity`: every file as `bundle.json`
lists it, nothing extra, no links), a `bundle.json` that is not canonical, a model
version devices cannot order (anti-rollback needs `MAJOR.MINOR.PATCH[-PRE]`), and a
missing or malformed `bundle.sig` (unless `unsigned`, for a bundle signed later or
staged by other means). With `pubkey` the signature is also verified against that key,
exactly as `trt-edge verify` does. The tar itself is `write_bundle_tar`'s: same bundle,
same bytes, written atomically.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from trt_edge_runner.bundle_format import BundleManifest
from trt_edge_runner.bundle_integrity import verify_directory
from trt_edge_runner.signature import (
    DetachedSignature,
    SignatureError,
    read_canonical_manifest,
    read_signature,
)
from trt_edge_runner.versions import parse_version

from trt_edge.pipeline.bundle_tar import write_bundle_tar
from trt_edge.signing.errors import SigningError
from trt_edge.signing.sign import verify_signature_with


@dataclass(frozen=True)
class PackResult:
    tar: Path
    manifest: BundleManifest
    signature: DetachedSignature | None


def pack_bundle(
    bundle: Path, tar_path: Path, *, unsigned: bool = False, pubkey: Path | None = None
) -> PackResult:
    """Check `bundle` as a device would, then write it as a reproducible tar at `tar_path`."""
    if not bundle.is_dir():
        raise SigningError(f"{bundle}: not a bundle directory (expected model.pte and bundle.json)")
    if tar_path.resolve().is_relative_to(bundle.resolve()):
        raise SigningError(
            f"-o {tar_path}: inside the bundle directory it packs; write the tar beside it"
        )
    document, manifest = read_canonical_manifest(bundle)
    verify_directory(bundle, manifest)
    parse_version(manifest.version, f"{manifest.name} version")
    signature: DetachedSignature | None = None
    if pubkey is not None:
        verify_signature_with(bundle, document, pubkey)  # the files were just hashed
    if not unsigned:
        try:
            signature = read_signature(bundle)
        except SignatureError as exc:
            exc.hint = "sign it first (`trt-edge sign BUNDLE --key KEY`), or pass --unsigned"
            raise
    write_bundle_tar(bundle, tar_path)
    return PackResult(tar_path, manifest, signature)
