"""Our images on this Docker engine, listed and pruned: builder and runtime images
(`images`) and the requirements images built on them (`requirements_image`), each marked
current or stale for this checkout. Apart from both, so that neither imports the other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from trt_edge.containers import catalog, requirements_image
from trt_edge.containers.daemon import connect
from trt_edge.containers.images import find_current

if TYPE_CHECKING:
    from docker import DockerClient


@dataclass(frozen=True)
class ListedImage:
    name: str
    tags: tuple[str, ...]
    id: str
    role: str
    version: str
    lock_sha256: str
    size_bytes: int
    created: str
    current: bool  # built from this checkout's current inputs


def list_images(client: DockerClient | None = None) -> list[ListedImage]:
    """Every local image carrying our labels, newest first, marked current or stale (a
    requirements image is current while the builder image it extends is)."""
    client = client or connect()
    current: dict[str, str] = {}
    for name in catalog.image_names():
        found = find_current(client, name)
        if found is not None:
            current[name] = found.id
    current_ids = set(current.values())
    rows: list[ListedImage] = []
    for image in client.images.list(filters={"label": catalog.LABEL_IMAGE}):
        labels = dict(image.labels or {})
        name = labels.get(catalog.LABEL_IMAGE, "?")
        role = labels.get(catalog.LABEL_ROLE, "?")
        if role == requirements_image.BUILD_STAGE:
            continue  # what a requirements image was built from, not an image to use
        if role == requirements_image.ROLE:  # a builder + a model's requirements
            is_current = requirements_image.is_current(labels, current_ids)
        else:
            is_current = current.get(name) == image.id
        rows.append(
            ListedImage(
                name=name,
                tags=tuple(image.tags),
                id=str(image.id),
                role=role,
                version=labels.get(catalog.LABEL_VERSION, "?"),
                lock_sha256=labels.get(catalog.LABEL_LOCK, ""),
                size_bytes=int(image.attrs.get("Size", 0)),
                created=str(image.attrs.get("Created", "")),
                current=is_current,
            )
        )
    rows.sort(key=lambda r: r.created, reverse=True)
    return rows


def prune_stale(
    client: DockerClient | None = None, names: frozenset[str] | None = None
) -> list[str]:
    """Remove our images that are not current for this checkout; return the removed tags.

    Every source change gives a new content-keyed tag (layers are shared, so this costs
    little disk), and old tags pile up. Images a container still uses are kept.
    """
    import docker.errors

    client = client or connect()
    removed: list[str] = []
    for row in list_images(client):
        if row.current or (names is not None and row.name not in names):
            continue
        for tag in row.tags:
            try:
                client.images.remove(tag)
            except docker.errors.APIError:
                continue  # in use by a container, or already gone with an earlier tag
            removed.append(tag)
    return removed
