"""Fixtures for the device tarball tests.

The tarballs are the real `dist/trt-edge-runner-<version>-linux-<arch>.tar.gz`,
built or refreshed by the same tool `make device-aarch64` / `make device-x86_64`
run (incremental: after make, a run only re-packs), then unpacked into temp dirs
and run from there (see unpacked.py). For aarch64 the loader finds libcrypto.so.3,
which a device brings with its OS, in the private arm64 OpenSSL sysroot the build
used; the ExecuTorch libraries it can only find in the tarball.

trt-edge-run refuses a bundle whose target.arch is not its own, so each runner gets
the example bundles built for its architecture (`example_bundles`): the session's
cpu-x86_64 builds, and the same examples built for cpu-aarch64 — the same model.pte
bytes (the stage cache reuses export, lowering and validation), another bundle.json.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TOOLS = REPO / "device_runner" / "cpp" / "tools"
if str(TOOLS) not in sys.path:
    sys.path.insert(0, str(TOOLS))

from agent.conftest import agent_bundles  # type: ignore[import-not-found]  # noqa: E402, F401
from device_tarball.unpacked import (  # type: ignore[import-not-found]  # noqa: E402
    AARCH64_LOADER,
    QEMU,
    DeviceRunner,
    unpack,
)
from fixtures_bundles import _shared_root, build_example  # noqa: E402


@dataclass(frozen=True)
class ExampleBundles:
    """The two example bundles built for one architecture's CPU target."""

    tiny_llm: Path
    vision: Path


@pytest.fixture(scope="session")
def aarch64_examples(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> ExampleBundles:
    root = _shared_root(tmp_path_factory, worker_id)
    return ExampleBundles(
        build_example("tiny_llm", root, target="cpu-aarch64"),
        build_example("vision", root, target="cpu-aarch64"),
    )


@pytest.fixture(scope="session")
def x86_64_examples(tiny_llm_bundle: Path, vision_bundle: Path) -> ExampleBundles:
    return ExampleBundles(tiny_llm_bundle, vision_bundle)


def examples_for(request: pytest.FixtureRequest, arch: str) -> ExampleBundles:
    """The example bundles a runner of `arch` accepts."""
    bundles: ExampleBundles = request.getfixturevalue(f"{arch}_examples")
    return bundles


@pytest.fixture
def device_examples(device: DeviceRunner, request: pytest.FixtureRequest) -> ExampleBundles:
    """The example bundles for `device`'s architecture."""
    return examples_for(request, device.arch)


def build_tarball(arch: str) -> Path:
    """Run the packaging tool for `arch` (as make does) and return the tarball."""
    import build_device_tarball

    done = subprocess.run(
        [sys.executable, str(TOOLS / "build_device_tarball.py"), "--arch", arch],
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


@pytest.fixture(scope="session")
def aarch64_runner(
    aarch64_tarball: Path, arm64_openssl_libdir: str, tmp_path_factory: pytest.TempPathFactory
) -> DeviceRunner:
    root = unpack(aarch64_tarball, tmp_path_factory.mktemp("unpacked-aarch64"))
    return DeviceRunner("aarch64", root, aarch64_tarball, arm64_openssl_libdir)


@pytest.fixture(scope="session")
def x86_64_runner(x86_64_tarball: Path, tmp_path_factory: pytest.TempPathFactory) -> DeviceRunner:
    root = unpack(x86_64_tarball, tmp_path_factory.mktemp("unpacked-x86_64"))
    return DeviceRunner("x86_64", root, x86_64_tarball, None)


@pytest.fixture(params=["aarch64", "x86_64"])
def device(request: pytest.FixtureRequest) -> DeviceRunner:
    """Each unpacked tarball in turn."""
    runner: DeviceRunner = request.getfixturevalue(f"{request.param}_runner")
    return runner
