"""Which environment runs a build's stages: its identity, part of every stage cache key.

A stage's output depends on the Python packages that computed it — not only torch and
executorch, but the model's own requirements (transformers) and everything they pull
in. So every cached stage is keyed by the environment that ran it, and `bundle.json`
says, per stage, which environment computed it:

- **local** (`trt-edge build --local`, or no container): the interpreter's prefix (the
  venv, symlinks resolved), the Python version and a hash of the installed distribution
  set (every `name==version` importable here, `PYTHONPATH` included). Installing,
  upgrading or removing any package gives a new environment.
- **container** (`trt-edge build --container`): the host runs the same pipeline inside a
  builder image and says which one in `$TRT_EDGE_BUILD_ENVIRONMENT` (the image id, the
  builder's lock hash, the model requirements' lock hash); the distribution set seen
  inside is added. A container build therefore never reuses a stage computed on the
  host or in another image, and a local build never reuses one computed in a container.

The identity (`BuildEnvironment.id`) is the sha256 of the canonical document; it holds
no timestamps or container ids, so one environment keeps one id across builds.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import platform
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.utils import canonicalize_name
from trt_edge_runner.bundle_format import canonical_json

from trt_edge.pipeline.errors import BadInputError

ENVIRONMENT_ENV = "TRT_EDGE_BUILD_ENVIRONMENT"
LOCAL = "local"
CONTAINER = "container"
# What the host says about the container it runs the build in (all required, str or None).
CONTAINER_FIELDS = (
    "image_id",
    "builder_image_id",
    "builder_lock_sha256",
    "requirements_lock_sha256",
)


@dataclass(frozen=True)
class BuildEnvironment:
    """One environment's document (`kind` local/container, see the module docstring)."""

    doc: dict[str, Any]

    @property
    def id(self) -> str:
        return hashlib.sha256(canonical_json(self.doc)).hexdigest()

    @property
    def kind(self) -> str:
        return str(self.doc["kind"])

    def provenance(self) -> dict[str, Any]:
        """`bundle.json` → `provenance.environment`: the document and its id."""
        return {"id": self.id, **self.doc}


def installed_distributions() -> dict[str, str]:
    """{normalized name: version} of every distribution importable here, the first one on
    `sys.path` winning, as `import` and `importlib.metadata.version` see them."""
    found: dict[str, str] = {}
    for dist in importlib.metadata.distributions():
        name = dist.metadata["Name"]
        if name:
            found.setdefault(canonicalize_name(str(name)), str(dist.version))
    return found


def distributions_sha256(distributions: dict[str, str] | None = None) -> str:
    """Hash of the sorted `name==version` lines of the installed distribution set."""
    dists = installed_distributions() if distributions is None else distributions
    lines = sorted(f"{name}=={version}" for name, version in dists.items())
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def _python() -> dict[str, str]:
    return {"implementation": sys.implementation.name, "version": platform.python_version()}


def _container_doc(raw: str) -> dict[str, Any]:
    """The host's description of the container (`$TRT_EDGE_BUILD_ENVIRONMENT`), checked."""
    try:
        given = json.loads(raw)
    except json.JSONDecodeError as exc:
        given = exc
    if not isinstance(given, dict) or set(given) != set(CONTAINER_FIELDS):
        raise BadInputError(
            f"${ENVIRONMENT_ENV} is not the container description trt-edge passes "
            f"(a JSON object with {', '.join(CONTAINER_FIELDS)})",
            hint=f"unset {ENVIRONMENT_ENV}: `trt-edge build --container` sets it for the "
            "build it runs inside the builder image",
        )
    bad = [k for k in CONTAINER_FIELDS if given[k] is not None and not isinstance(given[k], str)]
    if bad:
        raise BadInputError(f"${ENVIRONMENT_ENV}: {', '.join(bad)} must be strings or null")
    return {k: given[k] for k in CONTAINER_FIELDS}


def current_environment() -> BuildEnvironment:
    """The environment this process runs the stages in (reads `$TRT_EDGE_BUILD_ENVIRONMENT`)."""
    common = {"python": _python(), "distributions_sha256": distributions_sha256()}
    raw = os.environ.get(ENVIRONMENT_ENV)
    if raw:
        return BuildEnvironment({"kind": CONTAINER, **_container_doc(raw), **common})
    prefix = str(Path(sys.prefix).resolve())
    return BuildEnvironment({"kind": LOCAL, "prefix": prefix, **common})


def container_description(
    image_id: str,
    builder_image_id: str,
    builder_lock_sha256: str | None,
    requirements_lock_sha256: str | None,
) -> str:
    """What the host puts into `$TRT_EDGE_BUILD_ENVIRONMENT` for a build in a container."""
    doc = {
        "image_id": image_id,
        "builder_image_id": builder_image_id,
        "builder_lock_sha256": builder_lock_sha256,
        "requirements_lock_sha256": requirements_lock_sha256,
    }
    text: str = canonical_json(doc).decode()
    return text
