"""Which images the project defines: one folder per image under `images/`, described by data.

Each folder holds a `Dockerfile` (naming the shared fragments of `images/_fragments/`),
the `requirements.in` a person edits, the `lock.txt` generated from it (exact versions +
sha256 hashes) and an `image.json` saying what the image is for, which base it starts
from, which project packages it carries, which device runner tarball (if any) and how
its wheels are resolved. Code reads these fields; it never branches on image names.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from trt_edge import settings
from trt_edge.containers.errors import UnknownImageError

Role = Literal["builder", "runtime"]

IMAGES_DIR_ENV = settings.IMAGES_DIR
REPOSITORY_PREFIX = "trt-edge/"

# Labels every image carries (OCI keys where one fits, ours under io.trt-edge.*).
LABEL_VERSION = "org.opencontainers.image.version"
LABEL_TITLE = "org.opencontainers.image.title"
LABEL_BASE = "org.opencontainers.image.base.name"
LABEL_IMAGE = "io.trt-edge.image"
LABEL_ROLE = "io.trt-edge.role"
LABEL_LOCK = "io.trt-edge.lock-sha256"
LABEL_SOURCE = "io.trt-edge.source-sha256"
LABEL_KEY = "io.trt-edge.content-key"


@dataclass(frozen=True)
class PipPlatform:
    """How `pip download` resolves this image's wheels.

    `platforms` empty means "the host's own platform" (the CPU images here run the
    host's Python ABI); otherwise pip is asked for foreign wheels
    (`--platform/--python-version/--abi --only-binary=:all:`), e.g. aarch64 for Jetson.

    `sdists` names the few distributions published only as source (`image.json` →
    `pip.sdists`, e.g. TensorRT-RTX's `tensorrt-rtx` front-end packages): those, and only
    those, are fetched and locked as their sdist (`--no-binary`), whose sha256 pip checks
    in the image like a wheel's before building it offline from the locked wheelhouse.
    """

    python_version: str
    platforms: tuple[str, ...]
    abi: str | None
    sdists: tuple[str, ...] = ()

    def download_args(self) -> list[str]:
        source = ["--no-binary", ",".join(self.sdists)] if self.sdists else []
        if not self.platforms:
            return ["--only-binary=:all:", *source]
        args = ["--only-binary=:all:", *source, "--python-version", self.python_version]
        for platform in self.platforms:
            args += ["--platform", platform]
        if self.abi:
            args += ["--implementation", "cp", "--abi", self.abi]
        return args


@dataclass(frozen=True)
class ImageSpec:
    """One image folder: its files, its role and how it is built."""

    name: str
    folder: Path
    title: str  # the OCI title label
    description: str
    role: Role
    default_base: str
    local_base: bool  # default_base is made here by `trt-edge images base`
    buildable_here: bool
    not_buildable_reason: str | None
    sources: tuple[str, ...]  # project packages copied in: "device_runner", "sdk"
    runner_arch: str | None  # device images: the runner tarball's arch ("x86_64", "aarch64")
    pip: PipPlatform

    @property
    def repository(self) -> str:
        return REPOSITORY_PREFIX + self.name

    @property
    def dockerfile(self) -> Path:
        return self.folder / "Dockerfile"

    @property
    def requirements_in(self) -> Path:
        return self.folder / "requirements.in"

    @property
    def lock_file(self) -> Path:
        return self.folder / "lock.txt"


def images_dir() -> Path:
    """The `images/` folder: `$TRT_EDGE_IMAGES_DIR`, else the checkout this package lives in."""
    return settings.resolve().images_dir.value


def image_names(root: Path | None = None) -> tuple[str, ...]:
    base = root or images_dir()
    if not base.is_dir():
        return ()
    return tuple(sorted(p.name for p in base.iterdir() if (p / "image.json").is_file()))


def load_spec(name: str, root: Path | None = None) -> ImageSpec:
    """The spec of image `name`; `UnknownImageError` naming the known images otherwise."""
    base = root or images_dir()
    folder = base / name
    meta_path = folder / "image.json"
    if not meta_path.is_file():
        known = ", ".join(image_names(base)) or "(none)"
        raise UnknownImageError(f"unknown image {name!r}: no {meta_path}; known images: {known}")
    data: dict[str, Any] = json.loads(meta_path.read_text(encoding="utf-8"))
    pip = data.get("pip", {})
    return ImageSpec(
        name=name,
        folder=folder,
        title=str(data.get("title") or f"trt-edge {name}"),
        description=str(data["description"]),
        role=data["role"],
        default_base=str(data["default_base"]),
        local_base=bool(data.get("local_base", False)),
        buildable_here=bool(data.get("buildable_here", True)),
        not_buildable_reason=data.get("not_buildable_reason"),
        sources=tuple(data.get("sources", [])),
        runner_arch=data.get("runner_arch"),
        pip=PipPlatform(
            python_version=str(pip.get("python_version", "3.11")),
            platforms=tuple(pip.get("platforms", [])),
            abi=pip.get("abi"),
            sdists=tuple(pip.get("sdists", [])),
        ),
    )


def all_specs(root: Path | None = None) -> tuple[ImageSpec, ...]:
    return tuple(load_spec(n, root) for n in image_names(root))
