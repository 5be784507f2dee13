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
from trt_edge.signing import sign_bundle
from trt_edge.targets import load_catalog
from trt_edge_runner.bundle_format import BUNDLE_JSON, BundleManifest

_CATALOG = load_catalog()
# Fingerprints as a build writes them (the target catalog decides what each backend asks).
CPU_TARGET: dict[str, Any] = _CATALOG.fingerprint(_CATALOG.get("cpu-x86_64"), "xnnpack")
# A TensorRT bundle for an Orin Nano asks its SM, CUDA, TensorRT, JetPack and L4T ...
ORIN_TARGET: dict[str, Any] = _CATALOG.fingerprint(_CATALOG.get("jetson-orin-nano-jp6"), "tensorrt")
# ... an XNNPACK one only its CPU architecture.
ORIN_CPU_TARGET: dict[str, Any] = _CATALOG.fingerprint(
    _CATALOG.get("jetson-orin-nano-jp6"), "xnnpack"
)
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
) -> Path:
    """A signed bundle directory `out/tiny-VERSION`."""
    bundle = write_bundle(out / f"tiny-{version}", pte, profiles or GOOD_PROFILES, PHASES)
    manifest = BundleManifest.from_json((bundle / BUNDLE_JSON).read_bytes())
    manifest = dataclasses.replace(manifest, version=version, target=target or CPU_TARGET)
    (bundle / BUNDLE_JSON).write_bytes(manifest.to_canonical_json())
    sign_bundle(bundle, key)
    return bundle


def pack(bundle: Path, tar_path: Path) -> Path:
    with tarfile.open(tar_path, "w") as tar:
        tar.add(bundle, arcname=bundle.name)
    return tar_path


def make_signed_tar(out: Path, pte: Path, version: str, key: Path, **kwargs: Any) -> Path:
    bundle = make_bundle_dir(out, pte, version, key, **kwargs)
    return pack(bundle, out / f"{bundle.name}.tar")
