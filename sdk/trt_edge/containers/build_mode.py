"""Where a build runs and with what, decided once (`choose_mode` → `BuildMode`).

Local or in the target's builder image, and why; for a container build the `ContainerSetup`
it found on the way — the target, the builder choice (`builder_choice`), the checked
requirements lock and the current builder image — which the container build then takes
instead of resolving any of it again. Asks the Docker daemon only whether it answers and
which images it holds; runs nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from trt_edge import settings
from trt_edge.containers import catalog
from trt_edge.containers.builder_choice import BuilderChoice, choose_builder
from trt_edge.containers.daemon import connect
from trt_edge.containers.errors import (
    ContainerBuildError,
    ContainerError,
)
from trt_edge.containers.gpu import host_gpus
from trt_edge.containers.images import ImageRef, find_current
from trt_edge.containers.requirements_lock import RequirementsLock, check_lock
from trt_edge.manifest import load_manifest
from trt_edge.targets import Target, TargetCatalog, load_catalog

if TYPE_CHECKING:
    from trt_edge.manifest.resolved import ResolvedManifest


MODE_ENV = settings.BUILD_MODE  # 'local' | 'container': the default when no flag is given
DEFAULT_TARGET = "cpu-x86_64"


# --- what the build runs with, decided once -------------------------------------------


@dataclass(frozen=True)
class ContainerSetup:
    """What a container build of one manifest runs with, resolved on the host before any
    container starts, and handed on so that nothing is resolved a second time.

    `manifest` is the manifest it was resolved for (None: none given, or it does not
    load): a build of another manifest resolves its own. `image` is the current builder
    image `choose_mode` found (None: not looked up yet; the build looks it up)."""

    manifest: ResolvedManifest | None
    target: Target
    builder: BuilderChoice
    lock: RequirementsLock | None  # the manifest's checked requirements lock, if it has any
    image: ImageRef | None = None


@dataclass(frozen=True)
class BuildMode:
    """Where `trt-edge build` runs — in this environment or in a builder image — and why
    (the flag, `$TRT_EDGE_BUILD_MODE`, or what the tool found). A container build the tool
    chose carries the `setup` it found to decide so; one asked for by flag carries none:
    the build resolves it, and reports what is wrong as errors rather than as a reason."""

    kind: Literal["local", "container"]
    reason: str
    setup: ContainerSetup | None = None


def _target(
    targets: TargetCatalog, target_id: str | None, resolved: ResolvedManifest | None
) -> Target:
    """`target_id`, else the manifest's first target, else `DEFAULT_TARGET`."""
    if target_id is None and resolved is not None and resolved.targets:
        target_id = resolved.targets[0]
    try:
        return targets.get(target_id or DEFAULT_TARGET)
    except KeyError as err:
        raise ContainerBuildError(str(err), exit_code=2) from err


def _read_manifest(manifest_path: Path | None) -> ResolvedManifest | None:
    """The manifest when it loads without errors, else None (the build reports them)."""
    if manifest_path is None:
        return None
    return load_manifest(manifest_path).manifest


def choose_builder_for(target: Target, backend: str) -> BuilderChoice:
    """The builder for `target` and `backend` on this host (`ContainerBuildError` if none)."""
    return choose_builder(target, backend, bool(host_gpus()), load_catalog())


def _requirements_lock(resolved: ResolvedManifest | None, builder: str) -> RequirementsLock | None:
    """The manifest's checked lock for `builder` (None: no requirements); a missing or
    stale lock is a `RequirementsLockError` naming the command that makes it."""
    if resolved is None or not resolved.requirements:
        return None
    return check_lock(resolved, catalog.load_spec(builder))


def _builder_of(
    resolved: ResolvedManifest | None, target_id: str | None, backend: str | None
) -> tuple[Target, BuilderChoice]:
    """The target and the builder choice for it (`ContainerBuildError` if none)."""
    target = _target(load_catalog(), target_id, resolved)
    return target, choose_builder_for(target, backend or (resolved.backend if resolved else "auto"))


def resolve_setup(
    resolved: ResolvedManifest, target_id: str | None, backend: str | None
) -> ContainerSetup:
    """The setup of a container build asked for by flag: target, builder and the checked
    lock, each a `ContainerError` if it cannot be had — all before any daemon is asked."""
    target, builder = _builder_of(resolved, target_id, backend)
    return ContainerSetup(resolved, target, builder, _requirements_lock(resolved, builder.image))


def choose_mode(
    target: str | None,
    requested: str | None,
    manifest: Path | str | None = None,
    backend: str | None = None,
    resolved: ResolvedManifest | None = None,
) -> BuildMode:
    """The build's mode and why. Without a flag: container when an engine answers and the
    builder image of the backend that will run is current, else local with the reason and
    the fixing command.

    `$TRT_EDGE_BUILD_MODE` (local/container) stands in for a missing flag. Without a
    target, the manifest's first target is used when `manifest` is given, else cpu-x86_64;
    without a backend, the manifest's (else auto).
    """
    env_mode = settings.resolve().build_mode.value
    if requested is None and env_mode is not None:
        requested = env_mode
        how = f"{MODE_ENV}={env_mode}"
    else:
        how = f"--{requested}"
    if requested == "local":
        return BuildMode("local", how)
    if requested == "container":
        return BuildMode("container", how)
    if resolved is None:
        resolved = _read_manifest(Path(manifest) if manifest is not None else None)
    return _detect_mode(resolved, target, backend)


def _detect_mode(
    resolved: ResolvedManifest | None, target_id: str | None, backend: str | None
) -> BuildMode:
    """`choose_mode` without a flag: each fact a container build needs, in the order a
    person fixes them (target/backend, engine, builder image, requirements lock)."""
    try:
        target, builder = _builder_of(resolved, target_id, backend)
    except ContainerError as err:
        return BuildMode("local", f"{err}; building locally")
    found = _current_image(builder.image)
    if isinstance(found, str):
        return BuildMode("local", found)
    try:
        lock = _requirements_lock(resolved, builder.image)
    except ContainerError as err:
        hint = f"; {err.hint}" if err.hint else ""
        reason = f"{err}{hint}: building locally (a current lock enables container builds)"
        return BuildMode("local", reason)
    why = f"Docker engine reachable and builder image {found.tag} is current ({builder.reason})"
    return BuildMode("container", why, ContainerSetup(resolved, target, builder, lock, found))


def _current_image(name: str) -> ImageRef | str:
    """The current builder image `name`, or why there is none (a reason to build locally)."""
    try:
        client = connect(timeout=15)
    except ContainerError:
        return "no Docker engine reachable: building locally (--local)"
    try:
        ref = find_current(client, name)
    except ContainerError as err:
        return f"builder image {name!r} unusable ({err}): building locally"
    finally:
        client.close()
    if ref is None:
        return (
            f"no current builder image {catalog.REPOSITORY_PREFIX}{name} for this checkout: "
            f"building locally; `trt-edge images build {name}` enables container builds"
        )
    return ref
