"""Build, find and list the project's images.

`build_image(name)` turns `images/<name>/` into a local image tagged
`trt-edge/<name>:<content key>` and `:latest`. The content key hashes everything
that decides the image — the expanded Dockerfile, lock, project sources, the device
runner tarball (device images), CA certificates, base image id, trt-edge version —
so asking for an image whose inputs have not changed
returns the existing one (the test suite builds each image at most once), and a
changed input gives a new tag instead of silently running stale code.
"""

from __future__ import annotations

import hashlib
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trt_edge import __version__
from trt_edge.containers import base_image, catalog, context, lockfile, runner_tarball, wheelhouse
from trt_edge.containers.catalog import ImageSpec
from trt_edge.containers.daemon import connect
from trt_edge.containers.errors import ContainerError, ImageBuildError, ImageMissingError
from trt_edge.containers.reference import check_image_reference, check_tag

if TYPE_CHECKING:
    from docker import DockerClient
    from docker.models.images import Image

Progress = Callable[[str], None]


def _quiet(_: str) -> None:
    return None


@dataclass(frozen=True)
class ImageRef:
    """A local image of ours: its tag, id and identity labels."""

    name: str
    tag: str
    id: str
    labels: dict[str, str] = field(default_factory=dict)
    reused: bool = False
    seconds: float = 0.0

    @property
    def lock_sha256(self) -> str:
        return self.labels.get(catalog.LABEL_LOCK, "")

    @property
    def content_key(self) -> str:
        return self.labels.get(catalog.LABEL_KEY, "")


@dataclass(frozen=True)
class Plan:
    """What `build_image` would build: resolved base, hashes and the tag it gets."""

    spec: ImageSpec
    base: str
    base_id: str
    lock: lockfile.LockFile
    digest: context.ContextDigest

    @property
    def content_key(self) -> str:
        parts = [
            __version__,
            self.base_id,
            self.lock.sha256(),
            self.digest.recipe_sha256,
            self.digest.source_sha256,
            self.digest.certs_sha256,
            self.digest.runner_sha256,
        ]
        return hashlib.sha256("\n".join(parts).encode()).hexdigest()

    @property
    def tag(self) -> str:
        return f"{self.spec.repository}:{self.content_key[:12]}"

    def buildargs(self) -> dict[str, str]:
        return {
            "BASE": self.base,
            "TRT_EDGE_VERSION": __version__,
            "LOCK_SHA256": self.lock.sha256(),
            "SOURCE_SHA256": self.digest.source_sha256,
            "CONTENT_KEY": self.content_key,
        }

    def docker_build(self) -> DockerBuild:
        """The `docker build` that makes this plan's image."""
        return DockerBuild(
            tag=self.tag,
            buildargs=self.buildargs(),
            what=f"image {self.spec.name!r}",
            recipe=self.spec.dockerfile,
        )


def get_image(client: DockerClient, ref: str) -> Image | None:
    """The local image `ref`, None when absent; a ContainerError when the engine refuses."""
    import docker.errors

    try:
        return client.images.get(ref)
    except docker.errors.ImageNotFound:
        return None
    except docker.errors.APIError as err:
        # e.g. 400 "invalid reference format" for a reference that slipped past our check
        detail = err.explanation or str(err)
        raise ContainerError(
            f"the Docker engine refused to look up image {ref!r}: {detail}; check the image "
            "reference (`docker images` lists the local ones)"
        ) from err


def resolve_base(
    client: DockerClient, spec: ImageSpec, base: str | None, progress: Progress
) -> tuple[str, str]:
    """(reference, image id) of the base; makes the local Debian base when it is the default."""
    if base is None and spec.local_base:
        recipe = base_image.load_recipe()
        if not base_image.base_exists(client, recipe):
            progress(f"no local base {recipe.tag}: making it with debootstrap (a few minutes)")
            base_image.make_base(client, recipe, progress=progress)
        base = recipe.tag
    reference = check_image_reference(base or spec.default_base, "--base")
    found = get_image(client, reference)
    if found is None:
        raise ImageMissingError(
            f"base image {reference!r} of image {spec.name!r} is not present locally and this "
            "engine cannot pull; load it (`docker load -i FILE`), make the local Debian base "
            "(`trt-edge images base`), or pass another with `--base IMAGE`"
        )
    return reference, str(found.id)


def plan(
    client: DockerClient, name: str, *, base: str | None = None, progress: Progress = _quiet
) -> Plan:
    spec = catalog.load_spec(name)
    if not spec.buildable_here:
        raise ImageBuildError(
            f"image {name!r} cannot be built on this machine: {spec.not_buildable_reason}",
            exit_code=2,
        )
    lock = lockfile.parse_lock(spec.lock_file)
    reference, base_id = resolve_base(client, spec, base, progress)
    return Plan(spec, reference, base_id, lock, context.digest_inputs(spec))


def find_current(client: DockerClient, name: str) -> ImageRef | None:
    """The image of `name` built from the current inputs, if present (no build, no base making).

    It must carry its content tag: an untagged image with the same labels is a leftover
    (a rebuild moved the tag) or an intermediate image of another build started FROM it
    (a requirements image's steps inherit the builder's labels), never the builder."""
    spec = catalog.load_spec(name)
    if not spec.buildable_here:
        return None
    lock = lockfile.parse_lock(spec.lock_file)
    digest = context.digest_inputs(spec)
    for image in client.images.list(filters={"label": f"{catalog.LABEL_IMAGE}={name}"}):
        labels = dict(image.labels or {})
        if labels.get(catalog.LABEL_LOCK) != lock.sha256():
            continue
        if labels.get(catalog.LABEL_SOURCE) != digest.source_sha256:
            continue
        base_ref = labels.get(catalog.LABEL_BASE, "")
        base_found = get_image(client, base_ref) if base_ref else None
        candidate = Plan(spec, base_ref, str(base_found.id) if base_found else "", lock, digest)
        if labels.get(catalog.LABEL_KEY) == candidate.content_key and candidate.tag in image.tags:
            return ImageRef(name, candidate.tag, str(image.id), labels, reused=True)
    return None


@dataclass(frozen=True)
class DockerBuild:
    """One `docker build`: the tag it gets and its build arguments; `what` it builds and
    the `recipe` (Dockerfile) for the messages; `network_mode="none"` builds with the
    network off (RUN steps reach nothing)."""

    tag: str
    buildargs: dict[str, str]
    what: str
    recipe: Path
    network_mode: str | None = None


def stream_build(
    client: DockerClient, ctx: Path, build: DockerBuild, *, no_cache: bool, progress: Progress
) -> str:
    """`docker build` of the context `ctx` (legacy builder, never pulling), its steps
    streamed to `progress`; the image id, or an `ImageBuildError` quoting the failing step."""
    recent: list[str] = []
    image_id = ""
    for chunk in client.api.build(
        path=str(ctx),
        tag=build.tag,
        buildargs=build.buildargs,
        rm=True,
        forcerm=True,
        pull=False,
        nocache=no_cache,
        decode=True,
        network_mode=build.network_mode,
    ):
        if "error" in chunk:
            detail = chunk.get("errorDetail", {}).get("message") or chunk["error"]
            tail = "\n  ".join(recent[-15:])
            raise ImageBuildError(
                f"building {build.what} failed: {detail.strip()}\n"
                f"last output:\n  {tail}\nDockerfile: {build.recipe}"
            )
        text = str(chunk.get("stream", "")).rstrip()
        if text:
            recent.extend(text.splitlines())
            del recent[:-40]
            if text.startswith("Step ") or text.startswith("Successfully"):
                progress(text)
        aux: dict[str, Any] = chunk.get("aux") or {}
        if "ID" in aux:
            image_id = str(aux["ID"])
    if not image_id:
        found = get_image(client, build.tag)
        if found is None:
            raise ImageBuildError(f"building {build.what} produced no image")
        image_id = str(found.id)
    return image_id


def build_image(
    name: str,
    *,
    base: str | None = None,
    tag: str | None = None,
    client: DockerClient | None = None,
    force: bool = False,
    no_cache: bool = False,
    progress: Progress = _quiet,
) -> ImageRef:
    """Build image `name` (or return the existing one built from the same inputs).

    Prepares the wheelhouse on the host, assembles the context, builds with the
    legacy builder (no network needed inside), tags `<repo>:<key>`, `<repo>:latest`
    and `tag` when given.
    """
    spec = catalog.load_spec(name)  # bad input fails before any daemon is needed
    if base is not None:
        check_image_reference(base, "--base")
    if tag is not None:
        check_tag(tag)  # before a build of minutes, not after it
    if not spec.buildable_here:
        raise ImageBuildError(
            f"image {name!r} cannot be built on this machine: {spec.not_buildable_reason}",
            exit_code=2,
        )
    client = client or connect()
    started = time.monotonic()
    if spec.runner_arch:
        # Before the plan: the content key hashes the tarball this makes current.
        runner_tarball.ensure(spec.runner_arch, context.project_root(), progress)
    the_plan = plan(client, name, base=base, progress=progress)
    existing = None if force or no_cache else get_image(client, the_plan.tag)
    if existing is not None:
        progress(f"{the_plan.tag} is current (same lock, sources, base): reusing it")
        image_id = str(existing.id)
        reused = True
    else:
        wheels = wheelhouse.prepare(the_plan.lock, the_plan.spec.pip, progress=progress)
        with tempfile.TemporaryDirectory(prefix=f"trt-edge-ctx-{name}-") as tmp:
            ctx = Path(tmp)
            context.assemble(the_plan.spec, wheels, ctx)
            progress(f"building {the_plan.tag} (base {the_plan.base})")
            build = the_plan.docker_build()
            image_id = stream_build(client, ctx, build, no_cache=no_cache, progress=progress)
        reused = False
    image = client.images.get(image_id)
    image.tag(the_plan.spec.repository, "latest")
    if tag:
        repository, version = tag.rsplit(":", 1) if ":" in tag.split("/")[-1] else (tag, "latest")
        image.tag(repository, version)
    return ImageRef(
        name,
        the_plan.tag,
        image_id,
        dict(image.labels or {}),
        reused=reused,
        seconds=time.monotonic() - started,
    )
