"""The derived builder image a container build of a manifest with requirements runs in.

`ensure_requirements_image` extends the builder image (by id) with the wheels of a
model's requirements lock (`requirements_lock`), built from `images/_requirements/
Dockerfile` with the network off. It is named by content — `trt-edge/<builder>-
requirements:<key>`, the key hashing the builder image id, the lock's pins and the
recipe — so every model whose lock installs the same wheels into the same builder
shares one image, an unchanged one is found instead of rebuilt, and a new builder (a
source change) or a new lock gives a new image rather than a stale one.

A lock without pins (the builder already has every requirement) needs no image: the
build runs in the builder itself.
"""

from __future__ import annotations

import fcntl
import hashlib
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trt_edge.containers import catalog, wheelhouse
from trt_edge.containers.context import link_or_copy
from trt_edge.containers.images import DockerBuild, get_image, stream_build
from trt_edge.containers.requirements_lock import RequirementsLock, lock_command

if TYPE_CHECKING:
    from docker import DockerClient

    from trt_edge.containers.wheelhouse import Progress

RECIPE_DIR = "_requirements"
ROLE = "requirements"
BUILD_STAGE = "build-stage"  # the role label of the stage the wheels are installed in
LABEL_BUILDER_ID = "io.trt-edge.builder-image-id"
LABEL_REQUIREMENTS_LOCK = "io.trt-edge.requirements-lock-sha256"
LABEL_STAGE_OF = "io.trt-edge.stage-of"  # the build stage's label: the content key it serves
LOCK_IN_CONTEXT = "requirements.lock"


def _quiet(_: str) -> None:
    return None


def recipe_path() -> Path:
    return catalog.images_dir() / RECIPE_DIR / "Dockerfile"


def repository(builder: str) -> str:
    return f"{catalog.REPOSITORY_PREFIX}{builder}-{ROLE}"


@dataclass(frozen=True)
class RequirementsImage:
    """A builder image with a model's requirements installed."""

    tag: str
    id: str
    builder_id: str
    lock_sha256: str
    reused: bool
    seconds: float = 0.0


def content_key(builder_id: str, lock: RequirementsLock) -> str:
    recipe = hashlib.sha256(recipe_path().read_bytes()).hexdigest()
    return hashlib.sha256(f"{builder_id}\n{lock.sha256()}\n{recipe}".encode()).hexdigest()


def ensure_requirements_image(
    client: DockerClient,
    builder: str,
    builder_ref: str,
    builder_image: Any,
    lock: RequirementsLock,
    *,
    manifest_path: Path,
    progress: Progress = _quiet,
) -> RequirementsImage | None:
    """The image of `builder_image` (a docker `Image`; `builder_ref` its tag, `builder` its
    images/ name) with `lock` installed, built unless present; None for a lock without pins."""
    if not lock.entries:
        return None
    started = time.monotonic()
    builder_id = str(builder_image.id)
    key = content_key(builder_id, lock)
    tag = f"{repository(builder)}:{key[:12]}"
    with _one_build_at_a_time(key):  # a second build of the same image waits, then reuses
        existing = get_image(client, tag)
        if existing is not None and (existing.labels or {}).get(catalog.LABEL_KEY) == key:
            return RequirementsImage(tag, str(existing.id), builder_id, lock.sha256(), reused=True)
        image_id = _build(
            client, builder, builder_ref, builder_id, key, tag, lock, manifest_path, progress
        )
    return RequirementsImage(
        tag, image_id, builder_id, lock.sha256(), reused=False, seconds=time.monotonic() - started
    )


@contextmanager
def _one_build_at_a_time(key: str) -> Iterator[None]:
    """An exclusive lock per content key on this host (builds of one image wait for each
    other instead of building it twice; other images build in parallel)."""
    path = Path(tempfile.gettempdir()) / f"trt-edge-requirements-image-{key[:16]}.lock"
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _build(
    client: DockerClient,
    builder: str,
    builder_ref: str,
    builder_id: str,
    key: str,
    tag: str,
    lock: RequirementsLock,
    manifest_path: Path,
    progress: Progress,
) -> str:
    spec = catalog.load_spec(builder)
    wheels = wheelhouse.prepare(
        lock.pins, spec.pip, progress=progress, regenerate=lock_command(manifest_path, builder)
    )
    with tempfile.TemporaryDirectory(prefix=f"trt-edge-ctx-{builder}-{ROLE}-") as tmp:
        ctx = Path(tmp)
        shutil.copy2(recipe_path(), ctx / "Dockerfile")
        shutil.copy2(lock.path, ctx / LOCK_IN_CONTEXT)
        (ctx / "wheels").mkdir()
        for wheel in wheels:
            link_or_copy(wheel, ctx / "wheels" / wheel.name)
        progress(f"building {tag} ({builder_ref} + {len(lock.entries)} locked wheels)")
        build = DockerBuild(
            tag=tag,
            buildargs={
                "BUILDER": builder_id,
                "BUILDER_REF": builder_ref,
                "BUILDER_NAME": builder,
                "REQUIREMENTS_LOCK_SHA256": lock.sha256(),
                "CONTENT_KEY": key,
            },
            what=f"the {builder} builder with the requirements of {lock.path}",
            recipe=recipe_path(),
            network_mode="none",
        )
        image_id = stream_build(client, ctx, build, no_cache=False, progress=progress)
    _remove_build_stage(client, key)
    return image_id


def _remove_build_stage(client: DockerClient, key: str) -> None:
    """Drop the untagged stage that held the wheels (hundreds of MB): nothing reuses it, as
    an image with the same key is found instead of rebuilt. Best effort: a stage still in
    use (another build of the same key right now) stays, and costs only disk."""
    import docker.errors

    for stage in client.images.list(filters={"label": f"{LABEL_STAGE_OF}={key}"}):
        try:
            client.images.remove(stage.id, noprune=False)
        except docker.errors.APIError:
            continue


def is_current(labels: dict[str, str], current_builder_ids: set[str]) -> bool:
    """Whether a requirements image extends a builder image that is current for this
    checkout (`trt-edge images list` marks the others stale, `images prune` removes them)."""
    return labels.get(LABEL_BUILDER_ID, "") in current_builder_ids
