"""The target catalog: which devices a bundle can be built for, read from `catalog.json`.

Versions (JetPack ↔ L4T ↔ CUDA ↔ TensorRT ↔ SM) live in data, not in `if` chains,
so adding a device family is editing one JSON file; the sources for every
version are listed at the top of that file. So does what each backend needs
(`backends`): which builder image lowers it, whether that needs a GPU, and which
target fields a bundle's fingerprint asks a device to match — an XNNPACK bundle for
a Jetson asks only the CPU architecture, a TensorRT one its SM, CUDA, TensorRT and
JetPack/L4T. Only the standard library is used: `trt-edge validate` checks target
ids and must stay instant.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterator
from dataclasses import dataclass, fields
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from trt_edge_runner.errors import EXIT_BAD_INPUT, TrtEdgeError

TargetKind = Literal["cpu", "jetson", "x86"]
Arch = Literal["x86_64", "aarch64"]

CATALOG_FILE = "catalog.json"

# The target fields a bundle's fingerprint can ask a device to match (the device side,
# `trt_edge_runner.agent.facts`, has one matching rule for each).
FACT_FIELDS: tuple[str, ...] = ("arch", "sm", "jetpack", "l4t", "cuda", "tensorrt", "tensorrt_rtx")
# What names the target in a fingerprint, for people; never compared.
IDENTITY_FIELDS: tuple[str, ...] = ("id", "kind")


class UnknownTargetError(TrtEdgeError, KeyError):
    """A target id that is not in the catalog (exit 2); the message suggests the closest ids.

    Also a `KeyError`, for callers that look targets up like a mapping.
    """

    exit_code = EXIT_BAD_INPUT

    def __init__(self, target_id: str, known: tuple[str, ...]) -> None:
        self.target_id = target_id
        self.known = known
        hint = did_you_mean(target_id, known)
        super().__init__(f"unknown target {target_id!r}{hint}; known targets: {', '.join(known)}")


class UnknownBackendError(TrtEdgeError, KeyError):
    """A backend name the catalog says nothing about (exit 2)."""

    exit_code = EXIT_BAD_INPUT


class CatalogError(TrtEdgeError, ValueError):
    """`catalog.json` itself is malformed (a packaging bug, not a user mistake: exit 1)."""


@dataclass(frozen=True)
class Target:
    """One device family: its hardware, its software stack and the images that build for it."""

    id: str
    kind: TargetKind
    description: str
    arch: Arch
    gpu: str | None
    sm: str | None  # compute capability, e.g. "8.7"; comma-separated when a family spans several
    jetpack: str | None
    l4t: str | None
    cuda: str | None
    tensorrt: str | None
    tensorrt_rtx: str | None  # the TensorRT-RTX release its engines are built with
    builder_image: str  # folder name under images/
    runtime_image: str
    requires_tensorrt: bool
    flash_board: str | None
    flash_tool: str | None
    # Memory of each module variant of the family, in GiB (a Jetson's CPU and GPU share
    # it); None where the machine's memory is not fixed by the target (x86 boxes, CPUs).
    memory_gib: tuple[int, ...] | None = None

    def device_facts(self) -> dict[str, str | None]:
        """The facts a device of this target reports (its first SM when the family lists
        several): what an inventory entry or a flashed rootfs names by target id."""
        sm = self.sm_list()
        facts: dict[str, str | None] = {"id": self.id, "kind": self.kind}
        facts.update({name: getattr(self, name) for name in FACT_FIELDS})
        facts["sm"] = sm[0] if sm else None
        return facts

    @property
    def tensorrt_flavour(self) -> str | None:
        """Which TensorRT runs the target's engines: `tensorrt_rtx`, `tensorrt`, or None."""
        if self.tensorrt_rtx is not None:
            return "tensorrt_rtx"
        return "tensorrt" if self.requires_tensorrt else None

    @property
    def builds_without_gpu(self) -> bool:
        """TensorRT-RTX builds engines ahead of time on any CPU (docs/tensorrt.md); regular
        TensorRT builds on the target's GPU."""
        return self.tensorrt_rtx is not None

    def sm_list(self) -> tuple[str, ...]:
        """The compute capabilities this target covers (empty for CPU targets)."""
        if self.sm is None:
            return ()
        return tuple(part.strip() for part in self.sm.split(",") if part.strip())

    def accepts_sm(self, sm: str) -> bool:
        """Whether a device reporting compute capability `sm` belongs to this target."""
        return sm in self.sm_list()


@dataclass(frozen=True)
class TargetCatalog:
    """All known targets, in catalog order, and what each backend needs."""

    targets: tuple[Target, ...]
    backends: tuple[BackendNeeds, ...] = ()

    def backend(self, name: str) -> BackendNeeds:
        """What backend `name` needs; `UnknownBackendError` naming the known ones otherwise."""
        for needs in self.backends:
            if needs.name == name:
                return needs
        known = ", ".join(b.name for b in self.backends)
        raise UnknownBackendError(f"unknown backend {name!r}; the target catalog knows {known}")

    def fingerprint(self, target: Target, backend: str) -> dict[str, str]:
        """What `bundle.json`'s `target` records for a bundle of `backend` built for `target`.

        The target's id and kind (for people), then only the fields the backend needs a
        device to match, and of those only the ones the target sets: a device compares
        exactly what the bundle asks. Descriptions and image names may change without
        invalidating an installed bundle, so they are not in it.
        """
        doc = {name: str(getattr(target, name)) for name in IDENTITY_FIELDS}
        for name in self.backend(backend).fingerprint:
            value = getattr(target, name)
            if value is not None:
                doc[name] = str(value)
        return doc

    def ids(self) -> tuple[str, ...]:
        return tuple(t.id for t in self.targets)

    def get(self, target_id: str) -> Target:
        """The target with this id; `UnknownTargetError` (with suggestions) otherwise."""
        for target in self.targets:
            if target.id == target_id:
                return target
        raise UnknownTargetError(target_id, self.ids())

    def __contains__(self, target_id: object) -> bool:
        return any(t.id == target_id for t in self.targets)

    def __iter__(self) -> Iterator[Target]:
        return iter(self.targets)

    def __len__(self) -> int:
        return len(self.targets)


def did_you_mean(word: str, candidates: tuple[str, ...] | list[str]) -> str:
    """`" (did you mean 'x'?)"` for the closest candidate, or an empty string."""
    close = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


@dataclass(frozen=True)
class BackendNeeds:
    """What a bundle lowered with one backend needs: where it is built, and from a device."""

    name: str
    needs_gpu: bool  # lowering builds on the target's GPU stack (TensorRT builds engines there)
    builder_image: str | None  # None: the target's own builder_image
    fingerprint: tuple[str, ...]  # FACT_FIELDS the bundle asks a device to match

    def builder_for(self, target: Target) -> str:
        """The builder image (folder under images/) that lowers this backend for `target`."""
        return self.builder_image or target.builder_image


_REQUIRED = tuple(f.name for f in fields(Target))


def _target_from(entry: Any, where: str) -> Target:
    if not isinstance(entry, dict):
        raise CatalogError(f"{where}: expected an object")
    missing = [name for name in _REQUIRED if name not in entry]
    extra = sorted(set(entry) - set(_REQUIRED))
    if missing or extra:
        raise CatalogError(f"{where}: missing fields {missing}, unknown fields {extra}")
    if entry["kind"] not in ("cpu", "jetson", "x86"):
        raise CatalogError(f"{where}.kind: {entry['kind']!r} is not cpu, jetson or x86")
    if entry["arch"] not in ("x86_64", "aarch64"):
        raise CatalogError(f"{where}.arch: {entry['arch']!r} is not x86_64 or aarch64")
    if not isinstance(entry["requires_tensorrt"], bool):
        raise CatalogError(f"{where}.requires_tensorrt: expected true or false")
    memory = entry["memory_gib"]
    if memory is not None:
        if (
            not isinstance(memory, list)
            or not memory
            or not all(isinstance(m, int) and not isinstance(m, bool) and m > 0 for m in memory)
        ):
            raise CatalogError(f"{where}.memory_gib: expected null or a list of positive GiB")
        entry = {**entry, "memory_gib": tuple(memory)}
    return Target(**entry)


def _backend_from(name: str, entry: Any, where: str) -> BackendNeeds:
    if not isinstance(entry, dict) or set(entry) != {"needs_gpu", "builder_image", "fingerprint"}:
        raise CatalogError(f"{where}: expected needs_gpu, builder_image and fingerprint")
    asked = entry["fingerprint"]
    if not isinstance(asked, list) or not set(asked) <= set(FACT_FIELDS):
        raise CatalogError(f"{where}.fingerprint: expected a list of {', '.join(FACT_FIELDS)}")
    if not isinstance(entry["needs_gpu"], bool):
        raise CatalogError(f"{where}.needs_gpu: expected true or false")
    image = entry["builder_image"]
    if image is not None and not isinstance(image, str):
        raise CatalogError(f"{where}.builder_image: expected an image name or null")
    return BackendNeeds(name, entry["needs_gpu"], image, tuple(asked))


def parse_catalog(doc: Any, source: str = CATALOG_FILE) -> TargetCatalog:
    """Build a catalog from a parsed JSON document, refusing duplicates and unknown fields."""
    if not isinstance(doc, dict) or not isinstance(doc.get("targets"), list):
        raise CatalogError(f"{source}: expected an object with a 'targets' list")
    targets = tuple(
        _target_from(entry, f"{source}: targets[{i}]") for i, entry in enumerate(doc["targets"])
    )
    ids = [t.id for t in targets]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise CatalogError(f"{source}: duplicate target ids {duplicates}")
    backends = doc.get("backends", {})
    if not isinstance(backends, dict):
        raise CatalogError(f"{source}: backends: expected an object")
    needs = tuple(
        _backend_from(name, entry, f"{source}: backends.{name}")
        for name, entry in backends.items()
        if not name.startswith("$")
    )
    return TargetCatalog(targets, needs)


@lru_cache(maxsize=4)
def load_catalog(path: Path | None = None) -> TargetCatalog:
    """The packaged catalog (or the one at `path`). Cached: it is read on every validate."""
    if path is None:
        # A plain path next to this module: importlib.resources costs ~40 ms of start-up.
        text = (Path(__file__).parent / CATALOG_FILE).read_text("utf-8")
        source = CATALOG_FILE
    else:
        text = path.read_text("utf-8")
        source = str(path)
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CatalogError(f"{source}:{exc.lineno}:{exc.colno}: {exc.msg}") from None
    return parse_catalog(doc, source)
