"""The device runner tarballs, shared by the device tarball tests and the flash tests.

They are the real `dist/trt-edge-runner-<version>-linux-<arch>.tar.gz`, built or
refreshed by the same tool `make device-aarch64` / `make device-x86_64` run
(incremental: after make, a run only re-packs). For aarch64 the loader finds
libcrypto.so.3, which a device brings with its OS, in the private arm64 OpenSSL
sysroot the build used.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.device_tarball.unpacked import AARCH64_LOADER, QEMU
from tests.helpers.paths import DEVICE_TOOLS, REPO


def build_tarball(arch: str) -> Path:
    """Run the packaging tool for `arch` (as make does) and return the tarball."""
    import build_device_tarball

    done = subprocess.run(
        [sys.executable, str(DEVICE_TOOLS / "build_device_tarball.py"), "--arch", arch],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.fail(f"build_device_tarball --arch {arch} failed:\n{done.stderr}", pytrace=False)
    name = build_device_tarball.tarball_name(build_device_tarball.device_package_version(), arch)
    return REPO / "dist" / f"{name}.tar.gz"


@pytest.fixture(scope="session")
def aarch64_tarball() -> Path:
    if shutil.which(QEMU) is None or not AARCH64_LOADER.is_file():
        pytest.fail(
            f"{QEMU} or {AARCH64_LOADER} missing: run make sysdeps "
            "(qemu-user-static, g++-aarch64-linux-gnu)",
            pytrace=False,
        )
    return build_tarball("aarch64")


@pytest.fixture(scope="session")
def x86_64_tarball() -> Path:
    if os.uname().machine != "x86_64":
        pytest.skip("the x86_64 tarball is built natively, on x86_64 machines only")
    return build_tarball("x86_64")


@pytest.fixture(scope="session")
def arm64_openssl_libdir(aarch64_tarball: Path) -> str:
    """Where the aarch64 loader finds libcrypto.so.3: the sysroot the build used."""
    from device_sdk import arm64_openssl_sysroot, default_cache

    return str(arm64_openssl_sysroot(default_cache()) / "usr" / "lib" / "aarch64-linux-gnu")
