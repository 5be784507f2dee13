"""Build provenance of a containerized build: which image, which lock, which host.

Merged into `bundle.json`'s `provenance.builder` by the host after the container
finished (before the bundle is moved into place), so the build pipeline inside the
container stays the exact `--local` pipeline. Only facts that are stable for a given
machine and image go in (no timestamps, no container ids): two builds of the same
manifest on the same machine with the same image give identical bundles.
"""

from __future__ import annotations

import os
import platform
from typing import Any

from trt_edge.containers import catalog


def host_facts() -> dict[str, Any]:
    uname = platform.uname()
    return {
        "system": uname.system,
        "machine": uname.machine,
        "kernel": uname.release,
        "cpus": os.cpu_count(),
    }


def container_builder(
    choice: dict[str, Any],
    image_tag: str,
    image_id: str,
    repo_digests: list[str],
    labels: dict[str, str],
    engine_version: str,
    limits: dict[str, Any],
    requirements: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """`provenance.builder` of a container build. `image`/`image_id` name the builder
    image; with model requirements, `requirements` names their lock and the derived image
    the build ran in (`requirements.image_id`, also `provenance.environment.image_id`)."""
    return {
        "mode": "container",
        # Which builder and why (the backend that runs decides: see builder_choice).
        "backend": choice["backend"],
        "reason": choice["reason"],
        "image": image_tag,
        "image_id": image_id,
        # Local images have no registry digest; pushed ones list theirs here.
        "image_digests": sorted(repo_digests),
        "image_name": labels.get(catalog.LABEL_IMAGE),
        "lock_sha256": labels.get(catalog.LABEL_LOCK),
        "source_sha256": labels.get(catalog.LABEL_SOURCE),
        "trt_edge_version": labels.get(catalog.LABEL_VERSION),
        "base": labels.get(catalog.LABEL_BASE),
        "engine_version": engine_version,
        "host": host_facts(),
        "limits": limits,
        "network": "none",
        "requirements": requirements,
    }
