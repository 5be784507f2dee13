"""Publish a signed bundle directory as an OCI artifact; promote a version to a channel.

Publishing checks the bundle as a device would first (every file as `bundle.json` lists it,
a version devices can order, a `bundle.sig`), so a registry never holds what devices
refuse. Each file is one blob named by its sha256 (the digest `bundle.json` lists): a blob
the registry already has — the weights of the previous version — is not uploaded again, and
the result says how many bytes went up. A channel is a tag: `promote` reads the version's
manifest and puts the same manifest under the channel's tag, so the channel moves in one
request and devices following it see the new digest on their next poll.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from trt_edge_runner.bundle_format import BUNDLE_JSON, BUNDLE_SIG, canonical_json
from trt_edge_runner.bundle_integrity import verify_directory
from trt_edge_runner.errors import TrtEdgeError
from trt_edge_runner.follow.access import Access
from trt_edge_runner.follow.artifact import (
    BUNDLE_JSON_MEDIA_TYPE,
    FILE_MEDIA_TYPE,
    SIGNATURE_MEDIA_TYPE,
    ArtifactError,
    Blob,
    blobs_of,
    descriptor,
    documents_of,
    image_manifest,
)
from trt_edge_runner.follow.reference import Reference
from trt_edge_runner.follow.registry import NoSuchTag, RegistryClient
from trt_edge_runner.signature import SignatureError, read_canonical_manifest, read_signature
from trt_edge_runner.versions import parse_version

from trt_edge.signing.errors import SigningError


class PublishError(TrtEdgeError):
    """What `publish`/`promote` was pointed at is not a trt-edge bundle."""


@dataclass(frozen=True)
class Published:
    reference: Reference
    tags: tuple[str, ...]
    name: str
    version: str
    digest: str  # of the manifest, the same under every tag
    blobs_uploaded: int
    blobs_present: int  # already in the registry (shared with an earlier version)
    bytes_uploaded: int


def publish_bundle(
    bundle: Path, reference: Reference, access: Access, *, also_tag: tuple[str, ...] = ()
) -> Published:
    """Push `bundle` (a signed bundle directory) to `reference`, then tag it `also_tag` too."""
    if not bundle.is_dir():
        raise SigningError(f"{bundle}: not a bundle directory (expected model.pte and bundle.json)")
    document, manifest = read_canonical_manifest(bundle)
    verify_directory(bundle, manifest)
    parse_version(manifest.version, f"{manifest.name} version")
    try:
        read_signature(bundle)
    except SignatureError as exc:
        exc.hint = (
            "sign it first (`trt-edge sign BUNDLE --key KEY`): devices install signed bundles"
        )
        raise
    client = RegistryClient(reference, access)
    doc_blob = Blob(f"sha256:{hashlib.sha256(document).hexdigest()}", len(document), BUNDLE_JSON)
    sig_bytes = (bundle / BUNDLE_SIG).read_bytes()
    sig_blob = Blob(f"sha256:{hashlib.sha256(sig_bytes).hexdigest()}", len(sig_bytes), BUNDLE_SIG)
    uploads = [
        *((bundle / blob.path, descriptor(FILE_MEDIA_TYPE, blob)) for blob in blobs_of(manifest)),
        (bundle / BUNDLE_JSON, descriptor(BUNDLE_JSON_MEDIA_TYPE, doc_blob)),
        (bundle / BUNDLE_SIG, descriptor(SIGNATURE_MEDIA_TYPE, sig_blob)),
    ]
    uploaded = present = sent = 0
    for path, desc in uploads:
        if client.has_blob(desc):
            present += 1
            continue
        client.push_blob(path, desc)
        uploaded += 1
        sent += int(desc["size"])
    oci_manifest = canonical_json(image_manifest(manifest, doc_blob, sig_blob))
    tags = (reference.tag, *(t for t in also_tag if t != reference.tag))
    digest = ""
    for tag in tags:
        digest = client.push_manifest(oci_manifest, reference.with_tag(tag).tag)
    return Published(
        reference, tags, manifest.name, manifest.version, digest, uploaded, present, sent
    )


@dataclass(frozen=True)
class Promoted:
    channel: Reference
    version_tag: str
    digest: str
    previous_digest: str | None  # what the channel pointed at before (None: a new channel)


def promote(reference: Reference, channel: str, access: Access) -> Promoted:
    """Point tag `channel` at the manifest `reference` names (a published bundle version)."""
    client = RegistryClient(reference, access)
    target = reference.with_tag(channel)
    doc, digest, raw = client.manifest_bytes(reference.tag)
    try:
        documents_of(doc, str(reference))  # refuse to promote what is not a bundle
    except ArtifactError as exc:
        raise PublishError(str(exc)) from None
    previous: str | None
    try:
        _, previous = client.manifest(channel)
    except NoSuchTag:  # a channel nobody promoted to yet
        previous = None
    client.push_manifest(raw, channel)
    return Promoted(target, reference.tag, digest, previous)
