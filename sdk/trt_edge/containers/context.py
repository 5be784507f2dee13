"""The build context of one image: what the engine gets for `docker build`.

Laid out in a temp folder so the daemon sees only what the Dockerfile names: the
expanded `Dockerfile` (the image's own with the shared fragments written in, see
`dockerfile`), the lock and the other files of the image folder, the fragments'
context files, `wheels/` (hard links into the host wheelhouse, only the locked
wheels), `src/` (this checkout's `device_runner` and/or `sdk`, without caches or C++
build trees), `runner/` (device images: the unpacked runner tarball, see
`runner_tarball`) and `certs/` (the host's extra CA certificates, possibly none).
The content key hashes everything that decides the image, so an unchanged image is
found again instead of rebuilt, and a changed one is never mistaken for current.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from trt_edge import settings
from trt_edge.containers import dockerfile, runner_tarball
from trt_edge.containers.catalog import ImageSpec
from trt_edge.containers.errors import RunnerTarballError

CA_DIR_ENV = settings.EXTRA_CA_DIR

# Which files of a project package go into an image: the Python package and its metadata.
_SKIP_ANYWHERE = {"__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache"}
# Only at a package folder's top: setuptools output and the C++ project (sdk/trt_edge/pipeline
# is a real subpackage and must not be mistaken for a build tree).
_SKIP_AT_TOP = {"build", "dist", "cpp"}
_SKIP_SUFFIXES = (".pyc", ".pyo", ".so", ".o")
# Files of an image folder the context does not take as they are: the Dockerfile goes
# in expanded, the lock is hashed on its own (its canonical entries).
_SPEC_FILES_NOT_COPIED = {"image.json", "requirements.in", "Dockerfile"}
RUNNER_DIR = "runner"


@dataclass(frozen=True)
class ContextDigest:
    source_sha256: str
    recipe_sha256: str  # the expanded Dockerfile and the other files it copies
    certs_sha256: str
    certs: int
    runner_sha256: str = ""  # device images: the runner's sources and tarball contents


def project_root() -> Path:
    """The checkout holding `sdk/` and `device_runner/` (this package lives in sdk/trt_edge)."""
    return Path(__file__).resolve().parents[3]


def _walk(root: Path) -> Iterator[Path]:
    for dirpath, dirnames, filenames in os.walk(root):
        top = Path(dirpath) == root
        dirnames[:] = sorted(
            d
            for d in dirnames
            if d not in _SKIP_ANYWHERE
            and not (top and d in _SKIP_AT_TOP)
            and not d.endswith(".egg-info")
        )
        for name in sorted(filenames):
            if not name.endswith(_SKIP_SUFFIXES):
                yield Path(dirpath) / name


def source_files(package: str, root: Path | None = None) -> list[Path]:
    """Files of project package `package` ('sdk' or 'device_runner') that an image needs."""
    base = (root or project_root()) / package
    return [p for p in _walk(base) if p.is_file()]


def extra_ca_certs() -> list[Path]:
    """The host's extra CA certificates (`*.crt`, as update-ca-certificates expects)."""
    folder = settings.resolve().extra_ca_dir.value
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.rglob("*.crt") if p.is_file())


def _hash_files(files: list[tuple[str, Path]]) -> str:
    digest = hashlib.sha256()
    for relative, path in sorted(files):
        digest.update(relative.encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def _recipe_files(spec: ImageSpec, expanded: dockerfile.Expanded) -> list[Path]:
    """The files the context copies beside the Dockerfile: the image folder's, the fragments'."""
    own = [p for p in sorted(spec.folder.iterdir()) if p.is_file()]
    return [p for p in own if p.name not in _SPEC_FILES_NOT_COPIED] + list(expanded.context_files)


def digest_inputs(spec: ImageSpec, root: Path | None = None) -> ContextDigest:
    root = root or project_root()
    sources = [
        (str(p.relative_to(root)), p) for pkg in spec.sources for p in source_files(pkg, root)
    ]
    expanded = dockerfile.expand(spec)
    recipe = hashlib.sha256(expanded.text.encode())
    recipe.update(
        _hash_files(
            [(p.name, p) for p in _recipe_files(spec, expanded) if p.name != "lock.txt"]
        ).encode()
    )
    certs = extra_ca_certs()
    return ContextDigest(
        source_sha256=_hash_files(sources),
        recipe_sha256=recipe.hexdigest(),
        certs_sha256=_hash_files([(p.name, p) for p in certs]),
        certs=len(certs),
        runner_sha256=runner_tarball.digest(spec.runner_arch, root) if spec.runner_arch else "",
    )


def link_or_copy(src: Path, dst: Path) -> None:
    """`dst` as a hard link to `src` (no bytes copied), or a copy across file systems."""
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def assemble(spec: ImageSpec, wheels: list[Path], dest: Path, root: Path | None = None) -> None:
    """Lay the context of `spec` out in the empty folder `dest`.

    A device image's runner tarball must exist already (`runner_tarball.ensure`, which
    `build_image` runs first): the context never builds, it only takes.
    """
    root = root or project_root()
    expanded = dockerfile.expand(spec)
    (dest / "Dockerfile").write_text(expanded.text, encoding="utf-8")
    for path in _recipe_files(spec, expanded):
        shutil.copy2(path, dest / path.name)
    if spec.runner_arch:
        tarball = runner_tarball.tarball_path(spec.runner_arch, root)
        if not tarball.is_file():
            raise RunnerTarballError(
                f"image {spec.name!r} carries the {spec.runner_arch} runner tarball and there "
                f"is no {tarball}: `make device-{spec.runner_arch}` builds it"
            )
        runner_tarball.unpack(runner_tarball.check(tarball, spec.runner_arch), dest / RUNNER_DIR)
    (dest / "wheels").mkdir()
    for wheel in wheels:
        link_or_copy(wheel, dest / "wheels" / wheel.name)
    (dest / "src").mkdir()
    for package in spec.sources:
        for path in source_files(package, root):
            target = dest / "src" / path.relative_to(root)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)
    certs = dest / "certs"
    certs.mkdir()
    (certs / ".keep").write_text("extra CA certificates of the build host, if any\n")
    for index, cert in enumerate(extra_ca_certs()):
        shutil.copy2(cert, certs / f"{index:02d}-{cert.name}")
