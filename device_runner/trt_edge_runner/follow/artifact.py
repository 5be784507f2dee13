"""How a signed bundle is laid out as an OCI artifact (docs/fleet.md, "Fleets behind NAT").

One image manifest per bundle version:

- `artifactType` `application/vnd.trt-edge.bundle.v1`;
- `config`: the canonical `bundle.json` itself (media type `BUNDLE_JSON_MEDIA_TYPE`), so
  the manifest's first blob is the signed document;
- one layer per file `bundle.json` lists, its digest `sha256:` + the sha256 the signed
  `bundle.json` records and its title annotation the file's path in the bundle: a file
  unchanged between versions is one blob in the registry and on the device;
- one layer for `bundle.sig` (`SIGNATURE_MEDIA_TYPE`).

A device trusts nothing in the manifest but the two documents' digests: the files it
fetches are the ones the signed `bundle.json` lists, by the digests it lists
(`blobs_of`), so a manifest that lies about a layer cannot smuggle a file in.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from trt_edge_runner.bundle_format import BundleManifest
from trt_edge_runner.bundle_integrity import MAX_DOCUMENT_BYTES
from trt_edge_runner.errors import TrtEdgeError

ARTIFACT_TYPE = "application/vnd.trt-edge.bundle.v1"
MANIFEST_MEDIA_TYPE = "application/vnd.oci.image.manifest.v1+json"
BUNDLE_JSON_MEDIA_TYPE = "application/vnd.trt-edge.bundle.config.v1+json"
FILE_MEDIA_TYPE = "application/vnd.trt-edge.bundle.file.v1"
SIGNATURE_MEDIA_TYPE = "application/vnd.trt-edge.bundle.signature.v1+json"
TITLE = "org.opencontainers.image.title"
VERSION_ANNOTATION = "org.opencontainers.image.version"
NAME_ANNOTATION = "vnd.trt-edge.bundle.name"


class ArtifactError(TrtEdgeError, ValueError):
    """A registry manifest that is not a trt-edge bundle; the message names what is wrong."""


@dataclass(frozen=True)
class Blob:
    """One blob of the artifact: its digest (`sha256:HEX`), size and path in the bundle."""

    digest: str
    size: int
    path: str

    @property
    def hex(self) -> str:
        return self.digest.removeprefix("sha256:")


def descriptor(media_type: str, blob: Blob) -> dict[str, Any]:
    return {
        "mediaType": media_type,
        "digest": blob.digest,
        "size": blob.size,
        "annotations": {TITLE: blob.path},
    }


def blobs_of(manifest: BundleManifest) -> list[Blob]:
    """The file blobs of a bundle, as its signed `bundle.json` lists them."""
    return [
        Blob(f"sha256:{entry.sha256}", entry.size, path)
        for path, entry in sorted(manifest.files.items())
    ]


def image_manifest(manifest: BundleManifest, document: Blob, signature: Blob) -> dict[str, Any]:
    """The OCI image manifest of a bundle whose `bundle.json` and `bundle.sig` are `document`
    and `signature`."""
    return {
        "schemaVersion": 2,
        "mediaType": MANIFEST_MEDIA_TYPE,
        "artifactType": ARTIFACT_TYPE,
        "config": descriptor(BUNDLE_JSON_MEDIA_TYPE, document),
        "layers": [
            *(descriptor(FILE_MEDIA_TYPE, blob) for blob in blobs_of(manifest)),
            descriptor(SIGNATURE_MEDIA_TYPE, signature),
        ],
        "annotations": {VERSION_ANNOTATION: manifest.version, NAME_ANNOTATION: manifest.name},
    }


def documents_of(doc: Mapping[str, Any], where: str) -> tuple[Blob, Blob]:
    """The `bundle.json` and `bundle.sig` blobs a registry manifest names, or ArtifactError
    (also for a document claiming more than `MAX_DOCUMENT_BYTES`, the cap `install` holds
    them to: they are fetched before anything else is checked)."""
    if doc.get("artifactType") != ARTIFACT_TYPE:
        raise ArtifactError(
            f"{where}: not a trt-edge bundle (artifactType {doc.get('artifactType')!r}, "
            f"expected {ARTIFACT_TYPE!r}); publish it with `trt-edge publish`"
        )
    config = doc.get("config")
    layers = doc.get("layers")
    if not isinstance(config, Mapping) or not isinstance(layers, list):
        raise ArtifactError(f"{where}: manifest without config or layers")
    signatures = [
        layer
        for layer in layers
        if isinstance(layer, Mapping) and layer.get("mediaType") == SIGNATURE_MEDIA_TYPE
    ]
    if config.get("mediaType") != BUNDLE_JSON_MEDIA_TYPE or len(signatures) != 1:
        raise ArtifactError(
            f"{where}: expected config {BUNDLE_JSON_MEDIA_TYPE} and one "
            f"{SIGNATURE_MEDIA_TYPE} layer"
        )
    return _blob(config, "bundle.json", where), _blob(signatures[0], "bundle.sig", where)


def _blob(desc: Mapping[str, Any], path: str, where: str) -> Blob:
    digest, size = desc.get("digest"), desc.get("size")
    if not isinstance(digest, str) or not digest.startswith("sha256:") or len(digest) != 71:
        raise ArtifactError(f"{where}: {path}: digest {digest!r} is not sha256:<64 hex>")
    if not isinstance(size, int) or isinstance(size, bool) or size < 0:
        raise ArtifactError(f"{where}: {path}: size {size!r} is not a byte count")
    if size > MAX_DOCUMENT_BYTES:  # fetched before the disk budget is known: kept small
        raise ArtifactError(
            f"{where}: {path}: {size} bytes, more than a bundle's {MAX_DOCUMENT_BYTES}"
        )
    return Blob(digest, size, path)
