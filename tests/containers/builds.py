"""The two builds the container tests compare: local and `--container` (called, or as the
command line), each into a folder's `out/` with its stage cache in `cache/` beside it."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from trt_edge.containers.build_runner import build_in_container
from trt_edge.containers.container_plan import ContainerLimits
from trt_edge.pipeline.run import BuildOptions, BuildResult, build

if TYPE_CHECKING:
    from docker import DockerClient


def quiet(_: str) -> None:
    return None


def local_build(manifest: Path, base: Path) -> Path:
    """The bundle a local build of `manifest` writes under `base`."""
    return build(manifest, BuildOptions(out_dir=base / "out", cache_dir=base / "cache")).bundle_dir


def container_build(
    manifest: Path,
    base: Path,
    image: str | None,
    client: DockerClient,
    *,
    use_cache: bool = True,
    limits: ContainerLimits | None = None,
) -> BuildResult:
    """`build --container` of `manifest` under `base` in `image` (None: the tool's choice)."""
    options = BuildOptions(out_dir=base / "out", cache_dir=base / "cache", use_cache=use_cache)
    return build_in_container(
        manifest, options, None, image, limits=limits, client=client, echo=quiet
    )


def container_build_command(manifest: Path, base: Path, image: str, *flags: str) -> list[str]:
    """`trt-edge build MANIFEST --container --image IMAGE [flags]` under `base`, as argv."""
    cli = [sys.executable, "-m", "trt_edge", "build", str(manifest), "--container"]
    where = ["--out", str(base / "out"), "--cache-dir", str(base / "cache")]
    return [*cli, "--image", image, *flags, *where]
