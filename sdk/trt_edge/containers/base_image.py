"""The local Debian base: debootstrap a minimal bookworm and `docker import` it.

The daemons this project runs on cannot pull from any registry, so the CPU images
start from a root filesystem made here (`images/base/debootstrap.json` says what goes
in). Elsewhere a pinned official image is passed with `--base` instead. The tag is
derived from the recipe, so changing the package list makes a new base rather than
silently reusing an old one.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trt_edge.containers.catalog import images_dir
from trt_edge.containers.errors import BaseImageError

if TYPE_CHECKING:
    from docker import DockerClient

LABEL_RECIPE = "io.trt-edge.base-recipe-sha256"
Progress = Callable[[str], None]


@dataclass(frozen=True)
class BaseRecipe:
    repository: str
    suite: str
    variant: str
    mirror: str
    include: tuple[str, ...]
    strip: tuple[str, ...]

    def sha256(self) -> str:
        canon = json.dumps(
            [self.suite, self.variant, self.mirror, sorted(self.include), sorted(self.strip)]
        )
        return hashlib.sha256(canon.encode()).hexdigest()

    @property
    def tag(self) -> str:
        return f"{self.repository}:{self.sha256()[:12]}"


def load_recipe(path: Path | None = None, *, mirror: str | None = None) -> BaseRecipe:
    path = path or images_dir() / "base" / "debootstrap.json"
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return BaseRecipe(
        repository=str(data["repository"]),
        suite=str(data["suite"]),
        variant=str(data["variant"]),
        mirror=mirror or str(data["mirror"]),
        include=tuple(data["include"]),
        strip=tuple(data.get("strip", [])),
    )


def _quiet(_: str) -> None:
    return None


def base_exists(client: DockerClient, recipe: BaseRecipe) -> bool:
    import docker.errors

    try:
        client.images.get(recipe.tag)
    except docker.errors.ImageNotFound:
        return False
    return True


def make_base(
    client: DockerClient,
    recipe: BaseRecipe | None = None,
    *,
    work_dir: Path | None = None,
    progress: Progress = _quiet,
) -> str:
    """Debootstrap the recipe, strip caches and docs, import it; return the tag.

    Tags both `<repo>:<recipe hash>` and `<repo>:latest`. Needs root and debootstrap.
    """
    recipe = recipe or load_recipe()
    if shutil.which("debootstrap") is None:
        raise BaseImageError(
            "debootstrap is not installed; install it with "
            "`sudo apt-get install -y debootstrap`, or use a pinned official base: "
            "`trt-edge images build cpu --base python:3.11-slim-bookworm@sha256:<digest>`"
        )
    if os.geteuid() != 0:
        raise BaseImageError(
            "making the Debian base needs root (debootstrap creates device nodes and "
            "chowns files); run `sudo trt-edge images base`, or pass `--base IMAGE`"
        )
    with tempfile.TemporaryDirectory(prefix="trt-edge-rootfs-", dir=work_dir) as tmp:
        rootfs = Path(tmp) / "rootfs"
        command = [
            "debootstrap",
            f"--variant={recipe.variant}",
            f"--include={','.join(recipe.include)}",
            recipe.suite,
            str(rootfs),
            recipe.mirror,
        ]
        progress(" ".join(command))
        result = subprocess.run(command, capture_output=True, text=True, check=False)
        if result.returncode != 0:
            tail = "\n  ".join((result.stdout + result.stderr).splitlines()[-10:])
            raise BaseImageError(
                f"debootstrap failed (exit {result.returncode}) with mirror {recipe.mirror}:\n"
                f"  {tail}\ncheck that the mirror is reachable, or pass --mirror URL"
            )
        for relative in recipe.strip:
            target = rootfs / relative
            if target.is_dir():
                for child in target.iterdir():
                    if child.is_dir() and not child.is_symlink():
                        shutil.rmtree(child)
                    else:
                        child.unlink()
        # Host keys of the rootfs must never ship: runtime images generate their own.
        for key in (rootfs / "etc" / "ssh").glob("ssh_host_*"):
            key.unlink()
        progress(f"docker import → {recipe.tag}")
        tar_path = Path(tmp) / "rootfs.tar"
        subprocess.run(
            ["tar", "--numeric-owner", "-C", str(rootfs), "-cf", str(tar_path), "."],
            check=True,
        )
        changes = [
            f'LABEL {LABEL_RECIPE}="{recipe.sha256()}"',
            f'LABEL org.opencontainers.image.title="{recipe.suite} {recipe.variant} (debootstrap)"',
            "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            'CMD ["/bin/bash"]',
        ]
        repository, tag = recipe.tag.split(":", 1)
        # From a file (sent with a Content-Length): this daemon rejects the chunked
        # upload `import_image_from_stream` makes ("invalid byte in chunk length").
        client.api.import_image_from_file(
            str(tar_path), repository=repository, tag=tag, changes=changes
        )
    image = client.images.get(recipe.tag)
    image.tag(recipe.repository, "latest")
    return recipe.tag
