"""Signed bundle `.tar`s for the agent and fleet tests.

The program is a real XNNPACK `.pte` (the runner tests' tiny model, lowered once
per session); each version is a bundle directory written through
`BundleManifest` (the same document a build writes), signed with `trt-edge sign`
and packed as `NAME-VERSION/...` like a transported bundle.
"""

from __future__ import annotations

import dataclasses
import tarfile
from pathlib import Path
from typing import Any

from runner.tiny_bundles import SEQ_MAX, write_bundle  # type: ignore[import-not-found]
from trt_edge.signing import load_private_key, sign_bundle
from trt_edge_runner.bundle_format import BUNDLE_JSON, BUNDLE_SIG, BundleManifest
from trt_edge_runner.signature import SIGNATURE_ALGORITHM, DetachedSignature, key_id

CPU_TARGET: dict[str, Any] = {
    "id": "cpu-x86_64",
    "kind": "cpu",
    "arch": "x86_64",
    "sm": None,
    "jetpack": None,
    "l4t": None,
    "cuda": None,
    "tensorrt": None,
}
ORIN_TARGET: dict[str, Any] = {
    "id": "jetson-orin-nano-jp6",
    "kind": "jetson",
    "arch": "aarch64",
    "sm": "8.7",
    "jetpack": "6.2",
    "l4t": "36.4.3",
    "cuda": "12.6",
    "tensorrt": "10.3",
}
# decode pinned to profile 0 (seq 1), prefill to profile 1 (seq 2..64, opt 16).
GOOD_PROFILES = [("decode", 1, 1, 1), ("prefill", 2, 16, SEQ_MAX)]
PHASES = {"decode": 0, "prefill": 1}


def make_bundle_dir(
    out: Path,
    pte: Path,
    version: str,
    key: Path,
    *,
    target: dict[str, Any] | None = None,
    profiles: list[tuple[str, int, int, int]] | None = None,
    checked: bool = True,
) -> Path:
    """A signed bundle directory `out/tiny-VERSION` (`checked=False`: signed without
    `trt-edge sign`'s checks, e.g. for a version devices must refuse)."""
    bundle = write_bundle(out / f"tiny-{version}", pte, profiles or GOOD_PROFILES, PHASES)
    manifest = BundleManifest.from_json((bundle / BUNDLE_JSON).read_bytes())
    manifest = dataclasses.replace(manifest, version=version, target=target or CPU_TARGET)
    (bundle / BUNDLE_JSON).write_bytes(manifest.to_canonical_json())
    if checked:
        sign_bundle(bundle, key)
    else:
        resign(bundle, key)
    return bundle


def detached_signature(document: bytes, key: Path) -> bytes:
    """`bundle.sig` bytes over `document` made with the private key `key`, whatever the
    document says (the fuzz test re-signs mutated documents; `trt-edge sign` would refuse)."""
    private = load_private_key(key)
    signature = DetachedSignature(
        SIGNATURE_ALGORITHM, key_id(private.public_key()), private.sign(document)
    )
    return signature.to_json()


def resign(bundle: Path, key: Path) -> Path:
    """Write `bundle/bundle.sig` over its current `bundle.json`, with no check at all."""
    (bundle / BUNDLE_SIG).write_bytes(detached_signature((bundle / BUNDLE_JSON).read_bytes(), key))
    return bundle


def pack(bundle: Path, tar_path: Path) -> Path:
    with tarfile.open(tar_path, "w") as tar:
        tar.add(bundle, arcname=bundle.name)
    return tar_path


def make_signed_tar(out: Path, pte: Path, version: str, key: Path, **kwargs: Any) -> Path:
    bundle = make_bundle_dir(out, pte, version, key, **kwargs)
    return pack(bundle, out / f"{bundle.name}.tar")
