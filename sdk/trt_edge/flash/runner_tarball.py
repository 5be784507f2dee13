"""The C++ runner tarball a flashed device gets: found, checked, unpacked into the rootfs.

`make device-aarch64` writes `dist/trt-edge-runner-<version>-linux-aarch64.tar.gz`:
one top directory holding `bin/trt-edge-run`, the ExecuTorch libraries it loads
(`lib/`, found through its `$ORIGIN/../lib` runpath, so the tree runs wherever it
is unpacked) and `runner.json` (version, arch, every file's sha256). Before
anything goes into a rootfs the archive must be that: plain files and folders
under one top directory, a `runner.json` whose `arch` is the target's and whose
version is this trt-edge's, and every listed file present with its sha256.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tarfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from trt_edge.flash.errors import FlashError

RUNNER_BINARY = "bin/trt-edge-run"


def default_tarball(arch: str) -> Path:
    """Where `make device-<arch>` writes the tarball (relative to the repository root)."""
    from trt_edge_runner import __version__

    return Path("dist") / f"trt-edge-runner-{__version__}-linux-{arch}.tar.gz"


@dataclass(frozen=True)
class RunnerTarball:
    path: Path
    top: str  # the archive's one top-level directory
    info: dict[str, Any]  # its runner.json


def _refuse(path: Path, why: str) -> FlashError:
    return FlashError(
        f"--runner-tarball {path}: {why}",
        hint="build it with `make device-aarch64` (dist/trt-edge-runner-<version>-linux-"
        "aarch64.tar.gz) and pass that file",
    )


def check_runner_tarball(path: Path, arch: str) -> RunnerTarball:
    """Open and check `path` for a device of `arch`; FlashError (exit 2) naming what is wrong."""
    from trt_edge_runner import __version__

    if not path.is_file():
        raise _refuse(path, "no such file")
    try:
        with tarfile.open(path, "r:*") as tar:
            members = tar.getmembers()
            tops = {PurePosixPath(m.name).parts[0] for m in members if m.name}
            if len(tops) != 1:
                raise _refuse(path, f"expected one top-level directory, found {sorted(tops)}")
            top = tops.pop()
            for member in members:
                parts = PurePosixPath(member.name).parts
                if member.name.startswith("/") or ".." in parts:
                    raise _refuse(path, f"{member.name}: absolute path or '..'")
                if not (member.isfile() or member.isdir()):
                    raise _refuse(path, f"{member.name}: not a plain file or folder")
            handle = tar.extractfile(f"{top}/runner.json")
            if handle is None:
                raise _refuse(path, "runner.json is not a file")
            info = json.loads(handle.read())
    except KeyError:
        raise _refuse(path, "no runner.json: not a trt-edge runner tarball") from None
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise _refuse(path, f"not a readable .tar.gz ({exc})") from None
    except json.JSONDecodeError as exc:
        raise _refuse(path, f"runner.json is not valid JSON ({exc})") from None
    if not isinstance(info, dict) or info.get("name") != "trt-edge-runner":
        raise _refuse(path, "runner.json does not describe a trt-edge runner")
    if info.get("arch") != arch:
        raise _refuse(path, f"built for {info.get('arch')}, the target runs {arch}")
    if info.get("version") != __version__:
        raise _refuse(
            path,
            f"runner {info.get('version')} does not match this trt-edge's device agent "
            f"{__version__}: the agent reads the runner's interface of its own version",
        )
    files = info.get("files")
    if not isinstance(files, dict) or RUNNER_BINARY not in files:
        raise _refuse(path, f"runner.json lists no {RUNNER_BINARY}")
    return RunnerTarball(path, top, info)


def unpack_runner(tarball: RunnerTarball, into: Path) -> Path:
    """Extract `tarball` into the new directory `into` (its top folder's content, not the
    folder) and check every file runner.json lists against its sha256."""
    scratch = into.with_name(into.name + ".extract")
    shutil.rmtree(scratch, ignore_errors=True)
    with tarfile.open(tarball.path, "r:*") as tar:
        tar.extractall(scratch, filter="data")
    (scratch / tarball.top).rename(into)
    scratch.rmdir()
    for rel, digest in tarball.info["files"].items():
        file = into / rel
        actual = hashlib.sha256(file.read_bytes()).hexdigest() if file.is_file() else None
        if actual != digest:
            raise _refuse(tarball.path, f"{rel}: missing or its sha256 differs from runner.json")
    return into
