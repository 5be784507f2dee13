"""Image references and tags are checked against the engine's grammar before any work."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest
from trt_edge.containers.errors import ContainerError, ImageReferenceError
from trt_edge.containers.reference import check_image_reference, check_tag

if TYPE_CHECKING:
    from docker import DockerClient

NOWHERE = "unix:///nonexistent/trt-edge-test.sock"
DIGEST = "sha256:" + "0" * 64


@pytest.mark.parametrize(
    "ref",
    [
        "debian:bookworm",
        "trt-edge/cpu:abc123",
        "localhost:5000/team/img:1.0",
        "registry.example.com/a/b__c/d-e.f:v1_2",
        f"debian@{DIGEST}",
        f"debian:12@{DIGEST}",
        DIGEST,  # an image id
        "0123456789ab",  # a short image id
        "[::1]:5000/x:y",
    ],
)
def test_valid_references_pass(ref: str) -> None:
    assert check_image_reference(ref, "--base") == ref


@pytest.mark.parametrize(
    ("ref", "why"),
    [
        ("bad image name!!", "characters ' !' are not allowed"),
        ("Debian:12", "must be lowercase"),
        ("debian:", "malformed"),
        ("a:b:c", "malformed"),
        ("-debian", "malformed"),
        ("", "it is empty"),
        ("x/" + "a" * 300, "longer than 255"),
        ("debian:" + "t" * 129, "malformed"),
    ],
)
def test_invalid_references_name_option_value_and_reason(ref: str, why: str) -> None:
    with pytest.raises(ImageReferenceError) as info:
        check_image_reference(ref, "--base")
    assert info.value.exit_code == 2
    assert f"--base {ref!r} is not a valid image reference" in str(info.value)
    assert why in str(info.value)


def test_a_tag_takes_no_digest() -> None:
    assert check_tag("myorg/trt-edge-cpu:1.0") == "myorg/trt-edge-cpu:1.0"
    with pytest.raises(ImageReferenceError, match="--tag"):
        check_tag(f"myorg/x@{DIGEST}")


def _images_build(*extra: str) -> subprocess.CompletedProcess[str]:
    # No engine at all: the check must come before connecting, let alone building.
    return subprocess.run(
        [sys.executable, "-m", "trt_edge", "images", "build", "cpu", *extra],
        capture_output=True,
        text=True,
        env={**os.environ, "DOCKER_HOST": NOWHERE},
        check=False,
    )


def test_cli_bad_base_is_bad_input_before_the_engine_is_asked() -> None:
    done = _images_build("--base", "bad image name!!")
    assert done.returncode == 2, done.stderr
    assert (
        "trt-edge images build: error: --base 'bad image name!!' is not a valid image reference"
        in (done.stderr)
    )
    assert "Traceback" not in done.stderr


def test_cli_bad_tag_is_bad_input_before_building() -> None:
    done = _images_build("--tag", "BAD TAG!!")
    assert done.returncode == 2, done.stderr
    assert (
        "trt-edge images build: error: --tag 'BAD TAG!!' is not a valid image reference"
        in done.stderr
    )
    assert "Traceback" not in done.stderr


@pytest.mark.docker
def test_engine_refusal_of_a_lookup_is_a_clear_error(docker_client: DockerClient) -> None:
    """A reference the engine rejects (400, not 404) becomes a ContainerError, not a trace."""
    from trt_edge.containers.images import get_image

    with pytest.raises(ContainerError) as info:
        get_image(docker_client, "bad image name!!")
    assert "the Docker engine refused to look up image 'bad image name!!'" in str(info.value)
    assert "invalid reference format" in str(info.value)
