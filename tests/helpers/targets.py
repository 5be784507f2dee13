"""Target facts as the target catalog states them, so no test repeats a version number.

`fingerprint(id)` is what a bundle built for the target records (`bundle.json`'s
`target`); `device_facts(id)` is what a device of that target reports about itself,
which carries patch-level versions (CUDA 12.6.68, TensorRT 10.3.0.30) where the
catalog names the release (12.6, 10.3): a device matches when its versions start with
the bundle's.
"""

from __future__ import annotations

from typing import Any

from trt_edge.targets import load_catalog

CPU_X86_64 = "cpu-x86_64"
ORIN_NANO = "jetson-orin-nano-jp6"

# Patch-level suffixes a real device reports beyond the catalog's release numbers.
_PATCH = {"jetpack": ".1", "cuda": ".68", "tensorrt": ".0.30"}


def fingerprint(target_id: str, backend: str = "xnnpack") -> dict[str, Any]:
    """What `bundle.json`'s `target` records for a `backend` bundle built for `target_id`:
    id and kind, then only the fields that backend needs a device to match (the catalog's
    per-backend rule: arch for the CPU backends, the GPU stack for TensorRT)."""
    catalog = load_catalog()
    return dict(catalog.fingerprint(catalog.get(target_id), backend))


def device_facts(target_id: str) -> dict[str, Any]:
    """Facts a device of `target_id` reports: the catalog's device facts without the id and
    kind (its first SM when the family lists several), versions with a patch level as the
    device's libraries report them."""
    facts: dict[str, Any] = {
        key: value
        for key, value in load_catalog().get(target_id).device_facts().items()
        if key not in ("id", "kind")
    }
    for key, suffix in _PATCH.items():
        if facts.get(key) is not None:
            facts[key] = f"{facts[key]}{suffix}"
    return facts
