"""Fixtures for the device tarball tests: each tarball unpacked into a temp dir and run
from there (see unpacked.py; the tarballs themselves are the session fixtures of
tests/helpers/fixtures_device_tarball.py).

trt-edge-run refuses a bundle whose target.arch is not its own, so each runner gets
the example bundles built for its architecture (`example_bundles`): the session's
cpu-x86_64 builds, and the same examples built for cpu-aarch64 — the same model.pte
bytes (the stage cache reuses export, lowering and validation), another bundle.json.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.device_tarball.unpacked import DeviceRunner, unpack
from tests.helpers.fixtures_bundles import build_example
from tests.helpers.session_builds import build_once, shared_root


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


@dataclass(frozen=True)
class ExampleBundles:
    """The two example bundles built for one architecture's CPU target."""

    tiny_llm: Path
    vision: Path


@pytest.fixture(scope="session")
def aarch64_examples(tmp_path_factory: pytest.TempPathFactory) -> ExampleBundles:
    root = shared_root(tmp_path_factory)

    def example(name: str) -> Path:
        return build_once(
            root,
            f"{name}-cpu-aarch64",
            lambda out: build_example(name, out, target="cpu-aarch64"),
        )

    return ExampleBundles(example("tiny_llm"), example("vision"))


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
