"""The host-side wheelhouse: every wheel a lock file names, fetched once with the host's pip.

Images install with `--no-index`, so nothing inside a build reaches an index. The
wheels are downloaded on the host with the host's own pip settings (its index,
local wheel folders, proxy and CA), which is what makes the build work behind a
corporate proxy and what makes it hermetic: the bytes are checked against the lock's
sha256 here and again by pip inside the image.

The cache (`~/.cache/trt-edge-wheelhouse`, or `$TRT_EDGE_WHEELHOUSE`) is shared by all
images; a wheel is fetched at most once per machine.
"""

from __future__ import annotations

import contextlib
import os
import platform
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from trt_edge import settings
from trt_edge.containers.catalog import ImageSpec, PipPlatform
from trt_edge.containers.errors import LockFileError, WheelhouseError
from trt_edge.containers.lockfile import (
    LockEntry,
    LockFile,
    dist_name_version,
    file_sha256,
    is_sdist,
    normalize_name,
    parse_lock,
    parse_requirements_in,
    render_lock,
    write_atomic,
)

Progress = Callable[[str], None]


def wheelhouse_dir() -> Path:
    """`$TRT_EDGE_WHEELHOUSE`, else the user's cache folder (`trt_edge.settings`)."""
    return settings.resolve().wheelhouse.value


def _quiet(_: str) -> None:
    return None


def cached_sha256(path: Path) -> str:
    """sha256 of a wheel, remembered in a sidecar keyed on size and mtime (torch is 200 MB+)."""
    stat = path.stat()
    stamp = f"{stat.st_size} {stat.st_mtime_ns}"
    sidecar = path.with_name(path.name + ".sha256")
    try:
        recorded_stamp, digest = sidecar.read_text().split("\n")[:2]
        if recorded_stamp == stamp and len(digest) == 64:
            return digest
    except (OSError, ValueError):
        pass
    digest = file_sha256(path)
    with contextlib.suppress(OSError):  # a read-only cache still works, just slower
        write_atomic(sidecar, f"{stamp}\n{digest}\n")
    return digest


def index_wheels(folder: Path) -> dict[str, list[Path]]:
    """The wheels of `folder` by normalized name, and the sdists (`*.tar.gz`) of the few
    packages an image takes as source (`PipPlatform.sdists`): a lock pins either by hash."""
    wheels: dict[str, list[Path]] = {}
    if folder.is_dir():
        for path in sorted([*folder.glob("*.whl"), *folder.glob("*.tar.gz")]):
            name, _version = dist_name_version(path.name)
            wheels.setdefault(normalize_name(name), []).append(path)
    return wheels


def find_wheel(entry: LockEntry, index: dict[str, list[Path]]) -> Path | None:
    for path in index.get(entry.key, []):
        if cached_sha256(path) in entry.hashes:
            return path
    return None


def pip_download(
    args: list[str], folder: Path, progress: Progress, *, resolve: bool = False
) -> None:
    """`pip download` into `folder` with the host's pip settings; `resolve=True` lets pip
    resolve the requirements' dependencies too (else exactly the files named)."""
    command = [sys.executable, "-m", "pip", "download", "--disable-pip-version-check", "-q"]
    command += [*([] if resolve else ["--no-deps"]), "-d", str(folder), *args]
    progress("pip download " + " ".join(args))
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        errors = [
            line
            for line in (result.stderr or result.stdout).splitlines()
            if "is ignored: it is neither a file nor a directory" not in line
        ]
        raise WheelhouseError(
            "pip download failed on the host (the host's pip settings, index and proxy are "
            "used):\n  " + "\n  ".join(errors[-12:]) + "\nfix the host's pip access, or put "
            f"the wheels into {folder} yourself (their sha256 must match the lock)"
        )


def prepare(
    lock: LockFile,
    pip: PipPlatform,
    *,
    folder: Path | None = None,
    progress: Progress = _quiet,
    regenerate: str | None = None,
) -> list[Path]:
    """Every wheel of `lock`, found in the wheelhouse by hash; fetches what is missing.
    `regenerate` is the command that rewrites the lock (default: the image's)."""
    folder = folder or wheelhouse_dir()
    folder.mkdir(parents=True, exist_ok=True)
    index = index_wheels(folder)
    missing = [e for e in lock.entries if find_wheel(e, index) is None]
    if missing:
        progress(f"wheelhouse {folder}: fetching {len(missing)} of {len(lock.entries)} wheels")
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as handle:
            handle.write("\n".join(e.requirement() for e in missing) + "\n")
            request = Path(handle.name)
        try:
            pip_download(
                ["--require-hashes", "-r", str(request), *pip.download_args()], folder, progress
            )
        finally:
            request.unlink(missing_ok=True)
        index = index_wheels(folder)
    wheels: list[Path] = []
    for entry in lock.entries:
        found = find_wheel(entry, index)
        if found is None:
            fix = regenerate or f"trt-edge images lock {lock.path.parent.name}"
            raise WheelhouseError(
                f"{lock.path}:{entry.line}: no wheel for {entry.name}=={entry.version} with a "
                f"matching sha256 in {folder} after pip download; is the lock stale? "
                f"regenerate it with `{fix}`"
            )
        wheels.append(found)
    return wheels


def generate_lock(
    spec: ImageSpec, *, folder: Path | None = None, progress: Progress = _quiet
) -> LockFile:
    """Resolve `requirements.in` to wheels with the host's pip and write `lock.txt` atomically.

    Each pin is locked to the very file pip picks for the image's platform in this run,
    downloaded into a fresh folder: the shared wheelhouse may hold other wheels of the
    same release that also fit (cryptography's cp39-abi3 and cp311-abi3 both install on
    3.12), and a lock naming one pip would not pick fails `pip download --require-hashes`.
    The picked wheels then join the wheelhouse.
    """
    folder = folder or wheelhouse_dir()
    folder.mkdir(parents=True, exist_ok=True)
    pins = parse_requirements_in(spec.requirements_in)
    entries: list[LockEntry] = []
    with tempfile.TemporaryDirectory(prefix=".lock-", dir=folder) as tmp:
        fresh = Path(tmp)
        pip_download(["-r", str(spec.requirements_in), *spec.pip.download_args()], fresh, progress)
        index = index_wheels(fresh)
        for number, (name, version) in enumerate(pins, start=1):
            candidates = [
                p
                for p in index.get(normalize_name(name), [])
                if version_matches(dist_name_version(p.name)[1], version)
                and _platform_matches(p.name, spec.pip)
            ]
            if len(candidates) != 1:
                raise LockFileError(
                    f"{spec.requirements_in}: {name}=={version}: pip download gave "
                    f"{len(candidates)} wheels for this image's platform "
                    f"({', '.join(p.name for p in candidates) or 'none'}); expected one"
                )
            chosen = folder / candidates[0].name
            os.replace(candidates[0], chosen)
            real_version = dist_name_version(chosen.name)[1]
            entries.append(LockEntry(name, real_version, (cached_sha256(chosen),), number))
    text = render_lock(spec.name, spec.requirements_in.name, entries)
    write_atomic(spec.lock_file, text)
    return parse_lock(spec.lock_file)


def version_matches(wheel_version: str, pinned: str) -> bool:
    """`==2.13.0` accepts `2.13.0+cpu` (PEP 440: a local label is ignored when the pin has none)."""
    if "+" in pinned:
        return wheel_version == pinned
    return wheel_version.split("+", 1)[0] == pinned


def _arch(platform_tag: str) -> str:
    for arch in ("x86_64", "aarch64", "arm64"):
        if platform_tag.endswith(arch):
            return arch
    return platform_tag


def _platform_matches(filename: str, pip: PipPlatform) -> bool:
    """Whether a wheel fits the image: pure wheels always; others by CPU arch and Python tag.
    An sdist fits where the image takes that package as source (it is built in the image)."""
    if is_sdist(filename):
        return normalize_name(dist_name_version(filename)[0]) in {
            normalize_name(n) for n in pip.sdists
        }
    python_tag, abi, platform_tags = filename[: -len(".whl")].split("-")[-3:]
    if platform_tags == "any":
        return True
    if not pip.platforms:
        return _arch(platform_tags.split(".")[0]) == platform.machine()
    wanted_arch = {_arch(p) for p in pip.platforms}
    arch_ok = any(_arch(tag) in wanted_arch for tag in platform_tags.split("."))
    return arch_ok and _python_matches(python_tag, abi, pip.python_version)


def _python_matches(python_tag: str, abi: str, python_version: str) -> bool:
    """cp312 wheels for 3.12; abi3 wheels built for 3.N work on every later 3.M (PEP 384)."""
    wanted = int(python_version.replace(".", "")[1:] or 0)
    for tag in python_tag.split("."):
        if tag.startswith("py"):
            return True
        if tag.startswith("cp") and tag[2:].isdigit():
            built = int(tag[3:])
            if built == wanted or (abi == "abi3" and built <= wanted):
                return True
    return False
