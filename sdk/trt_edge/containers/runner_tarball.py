"""The device runner tarball a device image carries: made fresh, digested, unpacked.

A device image (`image.json` `runner_arch`) carries the C++ runner `trt-edge-run` from
`dist/trt-edge-runner-<version>-linux-<arch>.tar.gz`, the tarball that `make
device-<arch>` writes with `device_runner/cpp/tools/build_device_tarball.py`. A stale
runner must never reach an image, so:

- `ensure` runs that tool before every image build. It is incremental (cmake rebuilds
  what changed, about 2 s when nothing did) and writes the tarball atomically, so the
  tarball always matches this checkout's C++ sources;
- `digest` goes into the image's content key: the runner's sources (`device_runner/cpp`)
  and the tarball's contents (each member's path, mode and bytes; not the gzip bytes,
  whose mtimes follow the commit date). An image built from other sources, or a
  tarball left behind by them, is never "current".
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tarfile
from collections.abc import Callable, Iterator
from pathlib import Path, PurePosixPath

from trt_edge_runner import __version__ as runner_version

from trt_edge.containers.errors import RunnerTarballError

Progress = Callable[[str], None]
CPP = Path("device_runner") / "cpp"
TOOL = CPP / "tools" / "build_device_tarball.py"
# Inside device_runner/cpp, outputs of the tool and of cmake (build*/, build-*.log).
_OUTPUT_PREFIX = "build"


def _quiet(_: str) -> None:
    return None


def tarball_path(arch: str, root: Path) -> Path:
    """Where the tool writes the tarball of `arch` for this checkout's runner version."""
    return root / "dist" / f"trt-edge-runner-{runner_version}-linux-{arch}.tar.gz"


def ensure(arch: str, root: Path, progress: Progress = _quiet) -> Path:
    """Build (or refresh) the runner tarball of `arch` with the tool `make device-<arch>` runs."""
    tool = root / TOOL
    if not tool.is_file():
        raise RunnerTarballError(
            f"{tool} not found: device images carry the runner tarball, which only a "
            "checkout can build"
        )
    progress(f"runner tarball ({arch}): {TOOL} --arch {arch} (incremental)")
    done = subprocess.run(
        [sys.executable, str(tool), "--arch", arch, "--dist", str(root / "dist")],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        tail = "\n  ".join((done.stderr or done.stdout).strip().splitlines()[-15:])
        raise RunnerTarballError(
            f"building the {arch} runner tarball failed (exit {done.returncode}):\n  {tail}\n"
            f"`make device-{arch}` builds it with the same tool (`make sysdeps` installs "
            "what it needs)"
        )
    path = tarball_path(arch, root)
    if not path.is_file():
        raise RunnerTarballError(
            f"{tool} succeeded but wrote no {path}: do device_runner's pyproject.toml and "
            "trt_edge_runner.__version__ name the same version?"
        )
    return path


def _source_files(cpp: Path) -> Iterator[Path]:
    for dirpath, dirnames, filenames in os.walk(cpp):
        top = Path(dirpath) == cpp
        dirnames[:] = sorted(
            d for d in dirnames if d != "__pycache__" and not (top and d.startswith(_OUTPUT_PREFIX))
        )
        for name in sorted(filenames):
            if not (top and name.startswith(_OUTPUT_PREFIX)) and not name.endswith(".pyc"):
                yield Path(dirpath) / name


def sources_sha256(root: Path) -> str:
    """Hash of the runner's sources: what the tarball is built from."""
    cpp = root / CPP
    digest = hashlib.sha256()
    for path in _source_files(cpp):
        digest.update(path.relative_to(cpp).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def _inner(name: str) -> str:
    """A member's path below the tarball's one top-level folder."""
    parts = PurePosixPath(name).parts
    return PurePosixPath(*parts[1:]).as_posix() if len(parts) > 1 else ""


def content_sha256(tarball: Path) -> str:
    """Hash of what the tarball holds (paths below its top folder, modes, bytes)."""
    digest = hashlib.sha256()
    try:
        with tarfile.open(tarball, "r:gz") as tar:
            for member in sorted(tar.getmembers(), key=lambda m: m.name):
                digest.update(f"{_inner(member.name)}\0{member.type!r}\0{member.mode:o}\0".encode())
                if member.isfile():
                    handle = tar.extractfile(member)
                    assert handle is not None  # a regular file member always has data
                    digest.update(hashlib.sha256(handle.read()).digest())
    except (OSError, tarfile.TarError) as err:
        raise RunnerTarballError(
            f"{tarball}: cannot read the runner tarball ({err}); rebuild it with "
            "`make device-x86_64` / `make device-aarch64`"
        ) from err
    return digest.hexdigest()


def digest(arch: str, root: Path) -> str:
    """What the image's content key records about its runner (no build: reads the tarball).

    A missing tarball gives a digest no built image carries, so nothing is "current"
    until an image build has made the tarball.
    """
    path = tarball_path(arch, root)
    contents = content_sha256(path) if path.is_file() else "missing"
    return hashlib.sha256(f"{arch}\n{sources_sha256(root)}\n{contents}".encode()).hexdigest()


def unpack(tarball: Path, dest: Path) -> None:
    """Extract the tarball's top folder's contents into `dest` (bin/, lib/, runner.json)."""
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(tarball, "r:gz") as tar:
        members = []
        for member in tar.getmembers():
            inner = _inner(member.name)
            if not inner:
                continue
            member.name = inner
            members.append(member)
        tar.extractall(dest, members=members, filter="data")
