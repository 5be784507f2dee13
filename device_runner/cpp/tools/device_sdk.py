"""The ExecuTorch C++ SDK and the OpenSSL a device runner is built against.

- aarch64: the executorch wheel for manylinux_2_28_aarch64 carries the same C++
  SDK as the x86 one (headers, `lib/*.so`, CMake config; no libtorch, no Python
  needed). It is downloaded with pip (`--platform`, never installed), checked
  against the hash in `executorch-sdk.lock`, and only its `include/`, `lib/` and
  `share/` are unpacked into the cache.
- x86_64: the executorch installed in the running interpreter's environment (the
  venv), which must be the lock's version, so both tarballs carry one runtime.
- The arm64 OpenSSL (headers + libcrypto to link against; the device brings its
  own libcrypto.so.3): `apt-get download libssl-dev:arm64 libssl3:arm64`
  unpacked with `dpkg-deb -x` into a private sysroot. Never `apt-get install`:
  that would upgrade the host's own libssl to the arm64 package's version.

Everything lands in the cache (`$TRT_EDGE_DEVICE_CACHE`, default
`~/.cache/trt-edge/device`) through a temp directory renamed into place, under a
file lock, so concurrent builds share one download and an interrupted one leaves
nothing half-unpacked behind.
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.metadata
import importlib.util
import os
import re
import subprocess
import tempfile
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from build_error import DeviceBuildError

# The wheel tags asked of pip for the aarch64 SDK. Its C++ part does not depend on
# the Python ABI; cp311 is the tag whose hash the lock holds.
AARCH64_WHEEL_TAGS = (
    "--python-version", "3.11", "--implementation", "cp", "--abi", "cp311",
    "--platform", "manylinux_2_28_aarch64", "--platform", "manylinux_2_17_aarch64",
    "--platform", "manylinux2014_aarch64",
)  # fmt: skip
SDK_PARTS = ("executorch/include/", "executorch/lib/", "executorch/share/")
OPENSSL_DEBS = ("libssl-dev:arm64", "libssl3:arm64")

_LOCK_LINE = re.compile(r"^executorch==([0-9][^\s;]*)((?:\s+--hash=sha256:[0-9a-f]{64})+)\s*$")


def default_cache() -> Path:
    env = os.environ.get("TRT_EDGE_DEVICE_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "trt-edge" / "device"


@dataclass(frozen=True)
class Sdk:
    """An unpacked ExecuTorch C++ SDK: `root` holds include/, lib/ and share/cmake/."""

    root: Path
    version: str

    @property
    def lib_dir(self) -> Path:
        return self.root / "lib"

    @property
    def cmake_dir(self) -> Path:
        return self.root / "share" / "cmake"


@dataclass(frozen=True)
class SdkLock:
    """`executorch==VERSION --hash=sha256:...` from the lock file."""

    path: Path
    version: str
    sha256: tuple[str, ...]


def read_lock(path: Path) -> SdkLock:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise DeviceBuildError(f"{path}: cannot read the SDK lock ({exc.strerror})") from exc
    pins = [m for m in map(_LOCK_LINE.match, lines) if m]
    if len(pins) != 1:
        raise DeviceBuildError(
            f"{path}: expected exactly one line 'executorch==VERSION --hash=sha256:HEX', "
            f"found {len(pins)}"
        )
    match = pins[0]
    hashes = tuple(h.split(":", 1)[1] for h in match.group(2).split())
    return SdkLock(path, match.group(1), hashes)


@contextmanager
def locked(directory: Path) -> Iterator[None]:
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / ".lock", "a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _run(cmd: list[str], cwd: Path, what: str, hint: str) -> str:
    try:
        done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=False)
    except FileNotFoundError as exc:
        raise DeviceBuildError(f"{what}: {cmd[0]} not found. {hint}") from exc
    if done.returncode != 0:
        tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-8:])
        raise DeviceBuildError(f"{what} failed (exit {done.returncode}):\n{tail}\n{hint}")
    return done.stdout


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _unpack_sdk(wheel: Path, into: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        members = [n for n in archive.namelist() if n.startswith(SDK_PARTS)]
        for name in members:
            if name.startswith("/") or ".." in Path(name).parts:
                raise DeviceBuildError(f"{wheel}: refusing the unsafe member path {name!r}")
            archive.extract(name, into)
    if not (into / "executorch" / "share" / "cmake" / "executorch-config.cmake").is_file():
        raise DeviceBuildError(f"{wheel}: no executorch/share/cmake/executorch-config.cmake")


def aarch64_sdk(lock: SdkLock, cache: Path, python: str) -> Sdk:
    """The aarch64 SDK of the locked executorch wheel, downloaded once into `cache`."""
    final = cache / f"executorch-{lock.version}-linux-aarch64-{lock.sha256[0][:12]}"
    sdk = Sdk(final / "executorch", lock.version)
    with locked(cache):
        if sdk.cmake_dir.is_dir():
            return sdk
        with tempfile.TemporaryDirectory(prefix=".sdk-", dir=cache) as tmp:
            wheels = Path(tmp) / "wheels"
            pip = [python, "-m", "pip", "download", "-q", "--disable-pip-version-check",
                   "--no-deps", "--only-binary=:all:", *AARCH64_WHEEL_TAGS,
                   "--require-hashes", "-r", str(lock.path), "-d", str(wheels)]  # fmt: skip
            _run(
                pip,
                cwd=Path(tmp),
                what=f"pip download of executorch=={lock.version} for aarch64 ({lock.path})",
                hint="Check the network/pip index, or the hash in the lock if the wheel changed.",
            )
            found = sorted(wheels.glob("executorch-*.whl"))
            if len(found) != 1 or _file_sha256(found[0]) not in lock.sha256:
                raise DeviceBuildError(
                    f"pip download gave {[p.name for p in found]}, not one wheel with a sha256 "
                    f"listed in {lock.path}"
                )
            unpacked = Path(tmp) / "sdk"
            _unpack_sdk(found[0], unpacked)
            os.replace(unpacked, final)
    return sdk


def host_sdk(lock: SdkLock) -> Sdk:
    """The SDK inside the executorch installed for this interpreter (not imported)."""
    spec = importlib.util.find_spec("executorch")
    if spec is None or not spec.submodule_search_locations:
        raise DeviceBuildError(
            "executorch is not installed for this Python: run the tools with the venv's "
            "python (.venv/bin/python, make setup)"
        )
    root = Path(next(iter(spec.submodule_search_locations)))
    version = importlib.metadata.version("executorch")
    if version != lock.version:
        raise DeviceBuildError(
            f"the venv's executorch is {version} but {lock.path} pins {lock.version}: both "
            "device tarballs must carry the same runtime (update the lock or the venv)"
        )
    sdk = Sdk(root, version)
    if not (sdk.cmake_dir / "executorch-config.cmake").is_file():
        raise DeviceBuildError(f"{root}: the executorch install has no share/cmake (C++ SDK)")
    return sdk


def arm64_openssl_sysroot(cache: Path) -> Path:
    """A private sysroot with the arm64 OpenSSL headers and libraries (unpacked debs)."""
    with locked(cache):
        ready = [d for d in sorted(cache.glob("openssl-arm64-*")) if _is_openssl_root(d)]
        if ready:
            return ready[-1]
        with tempfile.TemporaryDirectory(prefix=".openssl-", dir=cache) as tmp:
            where = Path(tmp)
            _run(
                ["apt-get", "download", *OPENSSL_DEBS],
                cwd=where,
                what=f"apt-get download {' '.join(OPENSSL_DEBS)}",
                hint="The arm64 package lists are probably missing: run `make sysdeps` "
                "(.ci/sysdeps adds them; no arm64 package is ever installed).",
            )
            debs = sorted(where.glob("*.deb"))
            runtime = [d for d in debs if d.name.startswith("libssl3_")]
            if len(debs) != 2 or len(runtime) != 1:
                raise DeviceBuildError(f"apt-get download gave {[d.name for d in debs]}")
            version = _run(
                ["dpkg-deb", "-f", str(runtime[0]), "Version"],
                cwd=where,
                what="dpkg-deb -f",
                hint="dpkg-deb comes with dpkg (Debian/Ubuntu).",
            ).strip()
            root = where / "sysroot"
            for deb in debs:
                _run(
                    ["dpkg-deb", "-x", str(deb), str(root)],
                    cwd=where,
                    what=f"dpkg-deb -x {deb.name}",
                    hint="dpkg-deb comes with dpkg (Debian/Ubuntu).",
                )
            if not _is_openssl_root(root):
                raise DeviceBuildError(f"{debs}: unpacked without usr/include/openssl/evp.h")
            final = cache / f"openssl-arm64-{re.sub(r'[^A-Za-z0-9.+-]', '_', version)}"
            os.replace(root, final)
            return final


def _is_openssl_root(path: Path) -> bool:
    return (path / "usr" / "include" / "openssl" / "evp.h").is_file() and any(
        (path / "usr" / "lib" / "aarch64-linux-gnu").glob("libcrypto.so*")
    )
