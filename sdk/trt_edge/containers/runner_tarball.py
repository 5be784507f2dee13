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
  tarball left behind by them, is never "current";
- `check` and `unpack` are the one reader of the tarball, for device images and for
  `trt-edge flash` alike. The archive must be what the tool writes: plain files and
  folders under one top directory, a `runner.json` that is a runner's
  (`decode_runner_info`, its schema: it lists `bin/trt-edge-run`), whose `arch` is the
  one asked for and whose version is this checkout's, and every file it lists present
  with its sha256. A refusal is a `RunnerTarballInvalidError` carrying the path and why, so
  each caller words it for its own user (`flash` names its `--runner-tarball`).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from trt_edge_runner import __version__ as runner_version
from trt_edge_runner.runner_info import RUNNER_JSON, RunnerInfo, decode_runner_info
from trt_edge_runner.schemas import DocumentError

from trt_edge.containers.errors import RunnerTarballError, RunnerTarballInvalidError

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


@dataclass(frozen=True)
class RunnerTarball:
    """A runner tarball that passed `check`: what `unpack` needs to extract and verify it."""

    path: Path
    top: str  # the archive's one top-level directory
    info: RunnerInfo  # its runner.json


def check(path: Path, arch: str) -> RunnerTarball:
    """Open and check `path` for a machine of `arch`; `RunnerTarballInvalidError` says why not.

    Everything but the files' bytes is checked here, before a caller changes anything,
    so a wrong tarball is refused before a rootfs or a build context is touched.
    """
    if not path.is_file():
        raise RunnerTarballInvalidError(path, "no such file")
    try:
        with tarfile.open(path, "r:*") as tar:
            members = tar.getmembers()
            tops = {PurePosixPath(m.name).parts[0] for m in members if m.name}
            if len(tops) != 1:
                raise RunnerTarballInvalidError(
                    path, f"expected one top-level directory, found {sorted(tops)}"
                )
            top = tops.pop()
            for member in members:
                parts = PurePosixPath(member.name).parts
                if member.name.startswith("/") or ".." in parts:
                    raise RunnerTarballInvalidError(path, f"{member.name}: absolute path or '..'")
                if not (member.isfile() or member.isdir()):
                    raise RunnerTarballInvalidError(
                        path, f"{member.name}: not a plain file or folder"
                    )
            handle = tar.extractfile(f"{top}/{RUNNER_JSON}")
            if handle is None:
                raise RunnerTarballInvalidError(path, "runner.json is not a file")
            data = handle.read()
    except KeyError:
        raise RunnerTarballInvalidError(
            path, "no runner.json: not a trt-edge runner tarball"
        ) from None
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise RunnerTarballInvalidError(path, f"not a readable .tar.gz ({exc})") from None
    try:  # the schema: a trt-edge runner's, listing bin/trt-edge-run with its sha256
        info = decode_runner_info(data, RUNNER_JSON)
    except DocumentError as exc:
        raise RunnerTarballInvalidError(path, str(exc)) from None
    if info.arch != arch:
        raise RunnerTarballInvalidError(path, f"built for {info.arch}, the target runs {arch}")
    if info.version != runner_version:
        raise RunnerTarballInvalidError(
            path,
            f"runner {info.version} does not match this trt-edge's device agent "
            f"{runner_version}: the agent reads the runner's interface of its own version",
        )
    return RunnerTarball(path, top, info)


def unpack(tarball: RunnerTarball, into: Path) -> Path:
    """Extract `tarball` into the new directory `into` (its top folder's content, not the
    folder: bin/, lib/, runner.json) and check every file runner.json lists against its sha256.

    The archive is extracted beside `into` and its top folder renamed into place, so
    `into` never holds a half-extracted tree under its final name.
    """
    scratch = into.with_name(into.name + ".extract")
    shutil.rmtree(scratch, ignore_errors=True)
    with tarfile.open(tarball.path, "r:*") as tar:
        tar.extractall(scratch, filter="data")
    (scratch / tarball.top).rename(into)
    scratch.rmdir()
    for rel, sha256 in tarball.info.files.items():
        file = into / rel
        actual = hashlib.sha256(file.read_bytes()).hexdigest() if file.is_file() else None
        if actual != sha256:
            raise RunnerTarballInvalidError(
                tarball.path, f"{rel}: missing or its sha256 differs from runner.json"
            )
    return into
