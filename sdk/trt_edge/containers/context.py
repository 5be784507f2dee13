"""The build context of one image: what the engine gets for `docker build`.

Laid out in a temp folder so the engine sees only what the Dockerfile names:
the image folder's files (Dockerfile, lock, entrypoint), `wheels/` (hard links into
the host wheelhouse, only the locked wheels), `src/` (this checkout's
`device_runner` and/or `sdk`, without caches or C++ build trees) and `certs/` (the
host's extra CA certificates, possibly none). The content key hashes everything
that decides the image, so an unchanged image is found again instead of rebuilt.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from trt_edge.containers.catalog import ImageSpec

CA_DIR_ENV = "TRT_EDGE_EXTRA_CA_DIR"
DEFAULT_CA_DIR = Path("/usr/local/share/ca-certificates")

# Which files of a project package go into an image: the Python package and its metadata.
_SKIP_ANYWHERE = {"__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache"}
# Only at a package folder's top: setuptools output and the C++ project (sdk/trt_edge/pipeline
# is a real subpackage and must not be mistaken for a build tree).
_SKIP_AT_TOP = {"build", "dist", "cpp"}
_SKIP_SUFFIXES = (".pyc", ".pyo", ".so", ".o")
_SPEC_FILES_NOT_COPIED = {"image.json", "requirements.in"}


@dataclass(frozen=True)
class ContextDigest:
    source_sha256: str
    recipe_sha256: str  # Dockerfile and the other files of the image folder
    certs_sha256: str
    certs: int


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
    folder = Path(os.environ.get(CA_DIR_ENV) or DEFAULT_CA_DIR)
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.rglob("*.crt") if p.is_file())


def _hash_files(files: list[tuple[str, Path]]) -> str:
    digest = hashlib.sha256()
    for relative, path in sorted(files):
        digest.update(relative.encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def digest_inputs(spec: ImageSpec, root: Path | None = None) -> ContextDigest:
    root = root or project_root()
    sources = [
        (str(p.relative_to(root)), p) for pkg in spec.sources for p in source_files(pkg, root)
    ]
    recipe = [
        (p.name, p)
        for p in sorted(spec.folder.iterdir())
        if p.is_file() and p.name not in _SPEC_FILES_NOT_COPIED and p.name != "lock.txt"
    ]
    certs = extra_ca_certs()
    return ContextDigest(
        source_sha256=_hash_files(sources),
        recipe_sha256=_hash_files(recipe),
        certs_sha256=_hash_files([(p.name, p) for p in certs]),
        certs=len(certs),
    )


def _link_or_copy(src: Path, dst: Path) -> None:
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def assemble(spec: ImageSpec, wheels: list[Path], dest: Path, root: Path | None = None) -> None:
    """Lay the context of `spec` out in the empty folder `dest`."""
    root = root or project_root()
    for path in sorted(spec.folder.iterdir()):
        if path.is_file() and path.name not in _SPEC_FILES_NOT_COPIED:
            shutil.copy2(path, dest / path.name)
    (dest / "wheels").mkdir()
    for wheel in wheels:
        _link_or_copy(wheel, dest / "wheels" / wheel.name)
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
