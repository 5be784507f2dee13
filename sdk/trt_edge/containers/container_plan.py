"""A container build as a value: the image it runs in (`RunImage`) and the run itself
(`plan_container` → `ContainerPlan`: image, command, mounts, environment, limits).

Pure but for reading the daemon's image list: what a build asks of the daemon is readable
and tested without running anything (`tests/containers/test_build_plan.py`);
`build_runner.run_plan` is the one part that drives a container.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trt_edge import settings
from trt_edge.containers import catalog
from trt_edge.containers.errors import (
    ImageMissingError,
)
from trt_edge.containers.images import find_current
from trt_edge.containers.requirements_image import ensure_requirements_image
from trt_edge.containers.requirements_lock import check_lock
from trt_edge.pipeline.environment import ENVIRONMENT_ENV, container_description

if TYPE_CHECKING:
    from docker import DockerClient

    from trt_edge.manifest.resolved import ResolvedManifest
    from trt_edge.pipeline.run import BuildOptions

from trt_edge.containers.build_mode import ContainerSetup

CONTAINER_LABEL = "io.trt-edge.build"


@dataclass(frozen=True)
class ContainerLimits:
    """Resource limits of a build container; each overridable by an environment variable."""

    memory: str = "6g"  # TRT_EDGE_CONTAINER_MEMORY
    cpus: float = float(os.cpu_count() or 1)  # TRT_EDGE_CONTAINER_CPUS
    pids: int = 4096  # TRT_EDGE_CONTAINER_PIDS
    timeout_s: float = 3600.0  # TRT_EDGE_CONTAINER_TIMEOUT (seconds)

    @classmethod
    def from_env(cls) -> ContainerLimits:
        """The limits `trt_edge.settings` resolved (each variable, else its default)."""
        found = settings.resolve()
        return cls(
            memory=found.container_memory.value,
            cpus=found.container_cpus.value,
            pids=found.container_pids.value,
            timeout_s=found.container_timeout_s.value,
        )

    def doc(self) -> dict[str, Any]:
        return {"memory": self.memory, "cpus": self.cpus, "pids": self.pids}


# --- the image the build runs in --------------------------------------------------------


@dataclass(frozen=True)
class RunImage:
    """The image a container build runs in (`tag`, `id`): the builder image (`builder_*`),
    or the builder plus the manifest's locked requirements, which `requirements` records
    for provenance (None: the manifest has none)."""

    tag: str
    id: str
    builder_tag: str
    builder_id: str
    builder_labels: Mapping[str, str]
    builder_digests: tuple[str, ...] = ()
    requirements: dict[str, Any] | None = None


def _builder_image(
    client: DockerClient, setup: ContainerSetup, image: str | None
) -> tuple[str, Any]:
    """(tag, docker `Image`) of the builder: `--image`, else the current one of the choice."""
    import docker.errors

    name = setup.builder.image
    if image is not None:
        try:
            return image, client.images.get(image)
        except docker.errors.ImageNotFound as err:
            raise ImageMissingError(
                f"builder image {image!r} (--image) is not present locally; build it with "
                f"`trt-edge images build {name}` or load it with `docker load -i FILE`",
                exit_code=2,
            ) from err
    ref = setup.image or find_current(client, name)
    if ref is None:
        raise ImageMissingError(
            f"no current builder image {catalog.REPOSITORY_PREFIX}{name} for target "
            f"{setup.target.id!r} with backend {setup.builder.backend} (missing, or built from "
            "other sources/lock); build it with "
            f"`trt-edge images build {name}`, or build with --local",
            exit_code=2,
        )
    return ref.tag, client.images.get(ref.id)


def image_for_run(
    client: DockerClient,
    setup: ContainerSetup,
    resolved: ResolvedManifest,
    image: str | None,
    echo: Callable[[str], None],
) -> RunImage:
    """The builder, or the builder plus the manifest's locked requirements (made unless
    present).

    The lock was checked against this checkout's builder lock; an image given with
    --image may come from another lock (or builder), so it is checked against that one."""
    tag, builder_image = _builder_image(client, setup, image)
    labels = dict(builder_image.labels or {})
    plain = RunImage(
        tag,
        str(builder_image.id),
        tag,
        str(builder_image.id),
        labels,
        tuple(builder_image.attrs.get("RepoDigests") or ()),
    )
    lock = setup.lock
    if lock is None:
        return plain
    builder = labels.get(catalog.LABEL_IMAGE) or setup.builder.image
    builder_lock = labels.get(catalog.LABEL_LOCK)
    if builder != lock.header.builder or (
        builder_lock is not None and builder_lock != lock.header.builder_lock_sha256
    ):
        lock = check_lock(resolved, catalog.load_spec(builder), builder_lock)
    derived = ensure_requirements_image(
        client, builder, tag, builder_image, lock, manifest_path=resolved.source_path, progress=echo
    )
    requirements: dict[str, Any] = {
        "lock": lock.path.name,
        "lock_sha256": lock.sha256(),
        "packages": lock.packages(),  # what the lock installed over the builder
        "image": derived.tag if derived else None,
        "image_id": derived.id if derived else None,
    }
    if derived is None:
        return dataclasses.replace(plain, requirements=requirements)
    return dataclasses.replace(plain, tag=derived.tag, id=derived.id, requirements=requirements)


# --- the container run, as a value ------------------------------------------------------


@dataclass(frozen=True)
class Mount:
    """A host folder the container sees at the same path, so messages and provenance
    name the paths a local build would."""

    path: Path
    read_only: bool


@dataclass(frozen=True)
class BuildFolders:
    """The host paths of one container build: the manifest, the private staging folder
    (inside the output directory) and the stage cache."""

    manifest: Path
    staging: Path
    cache: Path


@dataclass(frozen=True)
class ContainerPlan:
    """Everything the container of one build is created with; `run_plan` only executes
    it, so what a build asks of the daemon is readable and tested without one."""

    image: str
    command: tuple[str, ...]
    user: str  # uid:gid of the host's user: outputs are not root-owned
    working_dir: Path
    mounts: tuple[Mount, ...]
    environment: Mapping[str, str]
    limits: ContainerLimits
    gpus: bool  # the host's GPUs, for a TensorRT build
    network: str = "none"
    labels: Mapping[str, str] = field(default_factory=lambda: {CONTAINER_LABEL: "1"})

    def docker_arguments(self) -> dict[str, Any]:
        """`containers.create` keyword arguments, less the GPU device requests."""
        return {
            "user": self.user,
            "network_mode": self.network,
            "mem_limit": self.limits.memory,
            "memswap_limit": self.limits.memory,  # no swap: the limit is the limit
            "nano_cpus": int(self.limits.cpus * 1e9),
            "pids_limit": self.limits.pids,
            "volumes": {
                str(m.path): {"bind": str(m.path), "mode": "ro" if m.read_only else "rw"}
                for m in self.mounts
            },
            "environment": dict(self.environment),
            "working_dir": str(self.working_dir),
            "labels": dict(self.labels),
            "entrypoint": [],
        }


def _command(
    manifest: Path, staging: Path, cache: Path, options: BuildOptions, target: str
) -> list[str]:
    command = ["trt-edge", "build", str(manifest), "--local", "--out", str(staging)]
    command += ["--cache-dir", str(cache), "--log-format", "json", "--target", target]
    command += ["--events", "-"]  # the typed event stream, on stdout: what the host reads
    if options.backend:
        command += ["--backend", options.backend]
    if not options.use_cache:
        command.append("--no-cache")
    if options.source_date_epoch is not None:
        command += ["--source-date-epoch", str(options.source_date_epoch)]
    if options.memory_headroom_mib is not None:
        command += ["--memory-headroom-mib", str(options.memory_headroom_mib)]
    return command


def _source_mounts(manifest: Path, resolved: ResolvedManifest) -> list[Mount]:
    """Read-only mounts of what the build reads: the manifest's folder, and a Hugging Face
    model folder that lies outside it (at its host path, as the manifest names it)."""
    mounts = [Mount(manifest.parent, read_only=True)]
    source = resolved.huggingface
    if source is not None and not source.folder.resolve().is_relative_to(manifest.parent):
        mounts.append(Mount(source.folder, read_only=True))
    return mounts


def plan_container(
    folders: BuildFolders,
    resolved: ResolvedManifest,
    options: BuildOptions,
    setup: ContainerSetup,
    image: RunImage,
    limits: ContainerLimits,
    *,
    user: str,
    host_environment: Mapping[str, str],
) -> ContainerPlan:
    """The container that runs the `--local` build of `folders.manifest` in `image`.

    `host_environment` is where `SOURCE_DATE_EPOCH` comes from (the host's, passed on);
    the rest of the container's environment is the cache and the build environment's
    identity (`$TRT_EDGE_BUILD_ENVIRONMENT`: part of every stage cache key inside)."""
    manifest, cache = folders.manifest, folders.cache
    environment = {
        "HOME": "/tmp",
        "PYTHONUNBUFFERED": "1",
        "TRT_EDGE_CACHE": str(cache),
        ENVIRONMENT_ENV: container_description(
            image.id,
            image.builder_id,
            image.builder_labels.get(catalog.LABEL_LOCK),
            setup.lock.sha256() if setup.lock else None,
        ),
    }
    if "SOURCE_DATE_EPOCH" in host_environment:
        environment["SOURCE_DATE_EPOCH"] = host_environment["SOURCE_DATE_EPOCH"]
    mounts = (
        *_source_mounts(manifest, resolved),
        Mount(folders.staging, read_only=False),
        Mount(cache, read_only=False),
    )
    return ContainerPlan(
        image=image.tag,
        command=tuple(_command(manifest, folders.staging, cache, options, setup.target.id)),
        user=user,
        working_dir=manifest.parent,
        mounts=mounts,
        environment=environment,
        limits=limits,
        gpus=setup.builder.needs_gpu,
    )
