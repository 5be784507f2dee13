"""`trt-edge build --container` of a Hugging Face model: its requirements (transformers)
installed offline into a derived builder image, against a real engine.

The model is the LLM tests' Qwen2 mini in the recipe of `trt_edge.llm`, required
at the gemma3 example's pins, so the lock `trt-edge lock` writes for it is the
example's closure: what is under test is the derived image (built once per builder
image and lock, reused across sessions), the bytes (the same `model.pte` as a local
build, with no stage cache at all) and the provenance (which image, which lock, which
environment computed each stage).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from trt_edge.containers import catalog
from trt_edge.containers.requirements_image import (
    LABEL_BUILDER_ID,
    LABEL_REQUIREMENTS_LOCK,
    RequirementsImage,
    ensure_requirements_image,
)
from trt_edge.containers.requirements_lock import RequirementsLock, generate_lock
from trt_edge.pipeline.run import load

from tests.containers.builds import container_build, local_build
from tests.containers.requirements_projects import hf_project

if TYPE_CHECKING:
    from docker import DockerClient
    from trt_edge.containers.images import ImageRef

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.xdist_group("container-builds")]


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return hf_project(tmp_path_factory.mktemp("hf") / "mini-qwen2")


@pytest.fixture(scope="module")
def lock(project: Path) -> RequirementsLock:
    """`trt-edge lock` of the project for the cpu builder: pip download on this host."""
    return generate_lock(load(project), catalog.load_spec("cpu"))


@pytest.fixture(scope="module")
def requirements_image(
    docker_client: DockerClient, cpu_image_ref: ImageRef, lock: RequirementsLock, project: Path
) -> RequirementsImage:
    image = ensure_on_cpu(docker_client, cpu_image_ref, lock, project)
    assert image is not None
    return image


def ensure_on_cpu(
    client: DockerClient, cpu_image_ref: ImageRef, lock: RequirementsLock, project: Path
) -> RequirementsImage | None:
    """`ensure_requirements_image` of the project's lock over the cpu builder image."""
    builder = client.images.get(cpu_image_ref.id)
    return ensure_requirements_image(
        client, "cpu", cpu_image_ref.tag, builder, lock, manifest_path=project
    )


@pytest.fixture(scope="module")
def local_bundle(project: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return local_build(project, tmp_path_factory.mktemp("hf-local"))


@pytest.fixture(scope="module")
def container_bundle(
    project: Path,
    requirements_image: RequirementsImage,
    docker_client: DockerClient,
    tmp_path_factory: pytest.TempPathFactory,
) -> Path:
    """Built with --no-cache from an empty cache, no --image: the tool's own choice."""
    base = tmp_path_factory.mktemp("hf-container")
    result = container_build(project, base, None, docker_client, use_cache=False)
    assert result.report.ok
    assert not any(result.cached.values())
    return result.bundle_dir


def test_the_hf_model_builds_in_the_derived_image_like_a_local_build_and_says_where(
    local_bundle: Path,
    container_bundle: Path,
    requirements_image: RequirementsImage,
    cpu_image_ref: ImageRef,
    lock: RequirementsLock,
) -> None:
    """The same model.pte as a local build (one test: its two builds are the module's
    slow part); provenance names the lock, the derived image and, per stage, the
    environment that computed it."""
    assert (container_bundle / "model.pte").read_bytes() == (
        local_bundle / "model.pte"
    ).read_bytes()
    local = json.loads((local_bundle / "bundle.json").read_bytes())
    container = json.loads((container_bundle / "bundle.json").read_bytes())
    assert container["files"] == local["files"]  # the tokenizer and llm facts too
    assert container["provenance"]["requirements"] == local["provenance"]["requirements"]
    assert local["provenance"]["environment"]["kind"] == "local"
    doc = container["provenance"]
    builder, env = doc["builder"], doc["environment"]
    assert (builder["mode"], builder["image_id"], builder["network"]) == (
        "container",
        cpu_image_ref.id,
        "none",
    )
    assert builder["requirements"] == {
        "lock": "manifest.cpu.lock",
        "lock_sha256": lock.sha256(),
        "packages": lock.packages(),
        "image": requirements_image.tag,
        "image_id": requirements_image.id,
    }
    assert builder["requirements"]["packages"]["transformers"] == "5.23.0"
    assert env["kind"] == "container"
    assert (env["image_id"], env["builder_image_id"]) == (requirements_image.id, cpu_image_ref.id)
    assert env["builder_lock_sha256"] == cpu_image_ref.lock_sha256
    assert env["requirements_lock_sha256"] == lock.sha256()
    assert doc["stages"] == {
        stage: {"cached": False, "computed_in": env["id"]}
        for stage in ("export", "lower", "validate")
    }


def test_the_derived_image_is_reused_and_holds_no_wheels(
    requirements_image: RequirementsImage,
    docker_client: DockerClient,
    cpu_image_ref: ImageRef,
    lock: RequirementsLock,
    project: Path,
) -> None:
    again = ensure_on_cpu(docker_client, cpu_image_ref, lock, project)
    assert again is not None and again.reused
    assert (again.tag, again.id) == (requirements_image.tag, requirements_image.id)
    image = docker_client.images.get(requirements_image.id)
    assert image.labels[LABEL_BUILDER_ID] == cpu_image_ref.id
    assert image.labels[LABEL_REQUIREMENTS_LOCK] == lock.sha256()
    assert image.labels[catalog.LABEL_ROLE] == "requirements"
    listed = docker_client.containers.run(
        requirements_image.id,
        ["sh", "-c", "ls /tmp/wheels 2>&1; /opt/trt-edge/bin/python -m pip list --format=json"],
        network_mode="none",
        remove=True,
        entrypoint=[],
    ).decode()
    assert "No such file or directory" in listed.splitlines()[0]  # the wheels stayed behind
    installed = {p["name"].lower(): p["version"] for p in json.loads(listed.splitlines()[-1])}
    assert installed["transformers"] == "5.23.0"
    # Neither the derived image nor any step of its build passes for the cpu builder, and
    # the stage that held the wheels is gone.
    from trt_edge.containers.images import find_current
    from trt_edge.containers.listing import list_images
    from trt_edge.containers.requirements_image import LABEL_STAGE_OF, content_key

    current = find_current(docker_client, "cpu")
    assert current is not None and current.id == cpu_image_ref.id
    key = content_key(cpu_image_ref.id, lock)
    assert image.labels[catalog.LABEL_KEY] == key
    assert docker_client.images.list(filters={"label": f"{LABEL_STAGE_OF}={key}"}) == []
    rows = {row.id: row for row in list_images(docker_client)}
    assert rows[requirements_image.id].current
    assert rows[requirements_image.id].role == "requirements"


def test_without_a_flag_a_manifest_without_a_current_lock_builds_locally_and_says_why(
    project: Path,
    lock: RequirementsLock,
    cpu_image_ref: ImageRef,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from trt_edge.containers.build_mode import choose_mode

    monkeypatch.delenv("TRT_EDGE_BUILD_MODE", raising=False)
    mode = choose_mode(None, None, project)
    assert mode.kind == "container" and cpu_image_ref.tag in mode.reason
    unlocked = project.with_name("unlocked.yaml")  # same model, a manifest with no lock
    unlocked.write_text(project.read_text())
    mode = choose_mode(None, None, unlocked)
    assert mode.kind == "local"
    assert f"there is no {unlocked.with_name('unlocked.cpu.lock')}" in mode.reason
    assert f"`trt-edge lock {unlocked} --builder cpu`" in mode.reason
    assert mode.reason.endswith("building locally (a current lock enables container builds)")
