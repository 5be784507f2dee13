"""Session fixtures for a real Docker engine and the project's images (container, fleet tests).

- `docker_client`: a connected `docker.DockerClient`. Without an engine the test is
  skipped, unless `TRT_EDGE_REQUIRE_DOCKER=1` (CI), where it fails instead.
- `skip_or_fail(reason)`: the same rule for any other host-dependent skip of the
  containers tests (a tool the test needs is missing).
- `x86_64_runner_tarball`: the runner tarball device images carry, made current by the
  tool `make device-x86_64` runs (incremental), as `trt-edge images build` does.
- `cpu_image`, `runtime_image`, `x86_rtx_image`: tags (str) of the `cpu` builder, the
  `cpu-runtime` device image and the `x86-rtx` builder (TensorRT for RTX, which builds
  engines without a GPU), built by `trt_edge.containers.images.build_image`, which
  reuses an existing image built from the same lock, sources and base — so a suite
  builds each image at most once, across sessions too. `cpu_image_ref` /
  `runtime_image_ref` / `x86_rtx_image_ref` give the `ImageRef` (id, labels).

Builds are serialized across pytest-xdist workers with a file lock: the second
worker waits for the first and then reuses its image instead of building it again.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.helpers.session_builds import locked

if TYPE_CHECKING:
    from docker import DockerClient
    from trt_edge.containers.images import ImageRef

REQUIRE_ENV = "TRT_EDGE_REQUIRE_DOCKER"
_LOCK_PATH = Path(tempfile.gettempdir()) / "trt-edge-test-image-build.lock"


def docker_required() -> bool:
    return os.environ.get(REQUIRE_ENV, "") == "1"


def skip_or_fail(reason: str) -> None:
    """Skip (locally) or fail (CI, TRT_EDGE_REQUIRE_DOCKER=1) when a containers test cannot run.

    CI promises every containers test runs; a silent skip there would hide a broken
    set-up (no engine, a missing tool) behind a green run. Every skip in the
    containers tests that depends on the host goes through here.
    """
    if docker_required():
        pytest.fail(f"{REQUIRE_ENV}=1 but {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def docker_client() -> Iterator[DockerClient]:
    from trt_edge.containers.daemon import connect
    from trt_edge.containers.errors import ContainerError

    try:
        client = connect()
    except ContainerError as err:
        skip_or_fail(str(err))
        raise  # unreachable: skip_or_fail skips or fails
    try:
        yield client
    finally:
        client.close()


def _image(client: DockerClient, name: str) -> ImageRef:
    from trt_edge.containers.images import build_image

    with locked(_LOCK_PATH):
        return build_image(name, client=client)


@pytest.fixture(scope="session")
def x86_64_runner_tarball() -> Path:
    from trt_edge.containers import context, runner_tarball

    with locked(_LOCK_PATH):
        return runner_tarball.ensure("x86_64", context.project_root())


@pytest.fixture(scope="session")
def cpu_image_ref(docker_client: DockerClient) -> ImageRef:
    return _image(docker_client, "cpu")


@pytest.fixture(scope="session")
def cpu_image(cpu_image_ref: ImageRef) -> str:
    return cpu_image_ref.tag


@pytest.fixture(scope="session")
def runtime_image_ref(docker_client: DockerClient) -> ImageRef:
    return _image(docker_client, "cpu-runtime")


@pytest.fixture(scope="session")
def runtime_image(runtime_image_ref: ImageRef) -> str:
    return runtime_image_ref.tag


@pytest.fixture(scope="session")
def x86_rtx_image_ref(docker_client: DockerClient) -> ImageRef:
    return _image(docker_client, "x86-rtx")


@pytest.fixture(scope="session")
def x86_rtx_image(x86_rtx_image_ref: ImageRef) -> str:
    return x86_rtx_image_ref.tag
