"""What this device is (arch, GPU compute capability, JetPack/L4T, CUDA, TensorRT), and whether
a bundle's target fingerprint fits it.

Facts are read from the places NVIDIA's stack puts them (`/etc/nv_tegra_release`,
the device tree, `/usr/local/cuda/version.json`, the dpkg database, `nvidia-smi`);
a facts file overrides any of them, for devices whose image moved things and for
tests. `fingerprint_mismatches` is pure and shared with the host's rollout planner
so both decide compatibility the same way.

A bundle's fingerprint asks only what its backend needs (the host's target catalog
decides which fields: an XNNPACK bundle for a Jetson asks `arch` alone, a TensorRT one
also `sm`, `cuda`, `tensorrt`, `jetpack`, `l4t`), and exactly the fields it sets are
compared, each by its rule in `RULES` (a field set to None means "any"):
`arch` equal; `sm` the device's compute capability is one the bundle lists;
`jetpack`, `l4t`, `cuda`, `tensorrt`, `tensorrt_rtx` the device version starts with the bundle's
dotted components (bundle "10.3" accepts device "10.3.0.30", not "10.30"). `id` and
`kind` name the target for people and are never compared. A field with no rule is
refused: a bundle asking what this agent cannot check must not install unchecked.
"""

from __future__ import annotations

import importlib.metadata
import json
import platform
import re
import shutil
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trt_edge_runner.agent.errors import AgentConfigError
from trt_edge_runner.schemas import read_document

FACT_KEYS: tuple[str, ...] = ("arch", "sm", "jetpack", "l4t", "cuda", "tensorrt", "tensorrt_rtx")
VERSION_KEYS: tuple[str, ...] = ("jetpack", "l4t", "cuda", "tensorrt", "tensorrt_rtx")
IDENTITY_KEYS: tuple[str, ...] = ("id", "kind")  # name the target; never compared

# Jetson SoC (device-tree "compatible") -> GPU compute capability.
TEGRA_SM: dict[str, str] = {"tegra234": "8.7", "tegra264": "11.0", "tegra194": "7.2"}


def version_matches(wanted: str, actual: str) -> bool:
    """`actual` has `wanted`'s dotted components as its prefix ("10.3" fits "10.3.0.30")."""
    want = wanted.strip().split(".")
    have = re.split(r"[.+~-]", actual.strip())
    return have[: len(want)] == want


def _listed(wanted: str) -> list[str]:
    return [part.strip() for part in wanted.split(",") if part.strip()]


@dataclass(frozen=True)
class FieldRule:
    """How one fingerprint field is compared with the device's fact of the same name."""

    fits: Callable[[str, str], bool]  # (bundle's value, device's value)
    refusal: Callable[[str, str, Any], str]  # (field, bundle's value, device's value or None)


def _needs(key: str, wanted: str, actual: Any) -> str:
    return f"{key}: bundle needs {wanted}, device has {actual or 'none'}"


RULES: dict[str, FieldRule] = {
    "arch": FieldRule(
        fits=lambda wanted, actual: actual == wanted,
        refusal=lambda key, wanted, actual: f"{key}: bundle needs {wanted}, device is {actual}",
    ),
    "sm": FieldRule(
        fits=lambda wanted, actual: actual in _listed(wanted),
        refusal=lambda key, wanted, actual: (
            f"{key}: bundle's engines are built for compute capability "
            f"{', '.join(_listed(wanted))}, device has {actual or 'no NVIDIA GPU'}"
        ),
    ),
    **{key: FieldRule(fits=version_matches, refusal=_needs) for key in VERSION_KEYS},
}


def fingerprint_mismatches(target: Mapping[str, Any], facts: Mapping[str, Any]) -> list[str]:
    """Every reason `target` (a bundle's fingerprint) does not fit `facts`; empty when it fits.

    Only the fields the fingerprint sets are compared: what the bundle does not ask
    (a GPU, for a CPU bundle) cannot keep it off a device.
    """
    reasons: list[str] = []
    for key, wanted in target.items():
        if wanted is None or key in IDENTITY_KEYS:
            continue
        rule = RULES.get(key)
        if rule is None:
            reasons.append(
                f"{key}: bundle asks for {key} {wanted!r}, which this device agent cannot "
                "check; update trt-edge-runner on the device"
            )
            continue
        actual = facts.get(key)
        if actual is None or not rule.fits(str(wanted), str(actual)):
            reasons.append(rule.refusal(key, str(wanted), actual))
    return reasons


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def _dpkg_version(package: str) -> str | None:
    if shutil.which("dpkg-query") is None:
        return None
    result = subprocess.run(
        ["dpkg-query", "-W", "-f=${Version}", package],
        capture_output=True,
        text=True,
        check=False,
    )
    version = result.stdout.strip()
    return version.split("-")[0].split("+")[0] if result.returncode == 0 and version else None


def _l4t_release(text: str | None) -> str | None:
    # "# R36 (release), REVISION: 4.3, GCID: ..." -> "36.4.3"
    if text is None:
        return None
    match = re.search(r"R(\d+)\s*\(release\),\s*REVISION:\s*([\d.]+)", text)
    return f"{match.group(1)}.{match.group(2)}" if match else None


def _jetson_sm() -> str | None:
    compatible = _read(Path("/proc/device-tree/compatible"))
    if compatible is None:
        return None
    for soc, sm in TEGRA_SM.items():
        if soc in compatible:
            return sm
    return None


def _discrete_gpu_sm() -> str | None:
    if shutil.which("nvidia-smi") is None:
        return None
    result = subprocess.run(
        ["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"],
        capture_output=True,
        text=True,
        check=False,
    )
    lines = result.stdout.split()
    return lines[0].strip() if result.returncode == 0 and lines else None


def _cuda_version() -> str | None:
    text = _read(Path("/usr/local/cuda/version.json"))
    if text is None:
        return None
    try:
        version = json.loads(text).get("cuda", {}).get("version")
    except (json.JSONDecodeError, AttributeError):
        return None
    return str(version) if version else None


def detect_facts() -> dict[str, str | None]:
    """Read the facts from this machine; fields it cannot find are None."""
    arch = platform.machine()
    arch = {"arm64": "aarch64", "AMD64": "x86_64"}.get(arch, arch)
    return {
        "arch": arch,
        "sm": _jetson_sm() or _discrete_gpu_sm(),
        "jetpack": _dpkg_version("nvidia-jetpack"),
        "l4t": _l4t_release(_read(Path("/etc/nv_tegra_release"))),
        "cuda": _cuda_version(),
        "tensorrt": _dpkg_version("tensorrt") or _dpkg_version("libnvinfer10"),
        "tensorrt_rtx": _tensorrt_rtx_version(),
    }


def _tensorrt_rtx_version() -> str | None:
    """TensorRT for RTX as pip installs it (`tensorrt_rtx`), the way an RTX box gets it."""
    try:
        return importlib.metadata.version("tensorrt_rtx")
    except importlib.metadata.PackageNotFoundError:
        return None


def _facts_error(message: str, field: str) -> AgentConfigError:
    return AgentConfigError(message)


def decode_facts(path: Path) -> dict[str, str | None]:
    """facts.json, held to `device-facts.schema.json`: each fact as the string it is compared
    as (a number an operator wrote, `8.7`, is the string "8.7"), or None. AgentConfigError
    naming the file and the fact when it is not such a document."""
    doc = read_document("device-facts", path, "device facts", _facts_error)
    return {key: None if value is None else str(value) for key, value in doc.items()}


def load_facts(override: Path | None) -> dict[str, str | None]:
    """Detected facts; each key of the `override` JSON file (when it exists) replaces one."""
    facts = detect_facts()
    if override is not None and override.exists():
        facts.update(decode_facts(override))
    return facts
