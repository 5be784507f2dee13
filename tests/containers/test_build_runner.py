"""`trt-edge build --container` against a real engine and the real `cpu` builder image.

The model is deliberately tiny (tests/containers/models/linear): what is under test
is the container path — same bytes as a local build, reproducible bundles,
provenance, and that a failing, killed or out-of-memory build leaves no container
and no partial bundle behind.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from trt_edge.containers import catalog
from trt_edge.containers.build_mode import BuildMode, choose_mode
from trt_edge.containers.build_runner import build_in_container
from trt_edge.containers.container_plan import CONTAINER_LABEL, ContainerLimits
from trt_edge.containers.errors import (
    ContainerBuildError,
    ContainerResourceError,
    ContainerTimeoutError,
    ImageMissingError,
)
from trt_edge.containers.images import build_image
from trt_edge.containers.lockfile import parse_lock
from trt_edge.pipeline.run import BuildOptions, build

from tests.containers.builds import container_build, container_build_command, local_build, quiet
from tests.helpers.waits import TIMEOUT_S

if TYPE_CHECKING:
    from docker import DockerClient

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.xdist_group("container-builds")]

MODEL = Path(__file__).parent / "models" / "linear"
BUNDLE = "tiny-linear-0.1.0"


def files_of(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def ours(client: DockerClient, out_dir: Path) -> list[Any]:
    """Build containers (running or not) whose staging mount lies in `out_dir`.

    One list call and no per-container inspect: other tests' build containers come and
    go meanwhile, and inspecting one that was just removed raises NotFound.
    """
    from docker.models.containers import Container

    found = []
    for row in client.api.containers(all=True, filters={"label": CONTAINER_LABEL}):
        mounts = row.get("Mounts") or []
        if any(str(m.get("Source", "")).startswith(str(out_dir)) for m in mounts):
            found.append(Container(attrs=row, client=client, collection=client.containers))
    return found


def assert_nothing_left(client: DockerClient, out_dir: Path) -> None:
    assert ours(client, out_dir) == []
    left = sorted(p.name for p in out_dir.iterdir()) if out_dir.exists() else []
    assert left == [], f"partial output left behind: {left}"


@pytest.fixture(scope="module")
def manifest(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("project") / "linear"
    shutil.copytree(MODEL, folder)
    return folder / "manifest.yaml"


@pytest.fixture(scope="module")
def local_bundle(manifest: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return local_build(manifest, tmp_path_factory.mktemp("local"))


@pytest.fixture(scope="module")
def container_bundle(
    manifest: Path,
    cpu_image: str,
    docker_client: DockerClient,
    tmp_path_factory: pytest.TempPathFactory,
) -> Path:
    result = container_build(
        manifest, tmp_path_factory.mktemp("container"), cpu_image, docker_client
    )
    assert result.report.ok
    assert result.backend == "xnnpack"
    assert set(result.stage_seconds) >= {"export", "lower", "validate"}
    return result.bundle_dir


def test_container_build_gives_the_local_model_pte_byte_for_byte(
    local_bundle: Path, container_bundle: Path
) -> None:
    assert container_bundle.name == local_bundle.name == BUNDLE
    assert (container_bundle / "model.pte").read_bytes() == (
        local_bundle / "model.pte"
    ).read_bytes()
    local_doc = json.loads((local_bundle / "bundle.json").read_text())
    container_doc = json.loads((container_bundle / "bundle.json").read_text())
    assert container_doc["files"] == local_doc["files"]
    assert local_doc["provenance"]["builder"]["mode"] == "local"


def test_container_bundle_records_image_lock_and_host(
    container_bundle: Path, cpu_image: str, docker_client: DockerClient
) -> None:
    builder = json.loads((container_bundle / "bundle.json").read_text())["provenance"]["builder"]
    image = docker_client.images.get(cpu_image)
    assert builder["mode"] == "container"
    assert builder["image_id"] == image.id
    assert builder["image"] == cpu_image
    assert builder["lock_sha256"] == parse_lock(catalog.load_spec("cpu").lock_file).sha256()
    assert builder["network"] == "none"
    assert builder["host"]["machine"] == os.uname().machine
    # --image given: recorded as the reason, beside the backend's own builder.
    assert builder["backend"] == "xnnpack"
    assert builder["reason"] == f"--image {cpu_image} given (the backend's builder: cpu)"
    # Outputs belong to the calling user, not to root-in-the-container.
    assert all(p.stat().st_uid == os.getuid() for p in container_bundle.rglob("*"))


def test_two_container_builds_give_identical_bundles(
    manifest: Path, container_bundle: Path, cpu_image: str, tmp_path: Path
) -> None:
    """The second one through the CLI, without the stage cache: every stage recomputed."""
    done = subprocess.run(
        container_build_command(manifest, tmp_path, cpu_image, "--no-cache"),
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert files_of(tmp_path / "out" / BUNDLE) == files_of(container_bundle)


def test_failing_build_shows_the_container_error_and_leaves_nothing(
    manifest: Path, cpu_image: str, docker_client: DockerClient, tmp_path: Path
) -> None:
    broken = tmp_path / "broken"
    shutil.copytree(manifest.parent, broken)
    text = (broken / "manifest.yaml").read_text()
    (broken / "manifest.yaml").write_text(text.replace("model.py:build_model", "model.py:nope"))
    out = tmp_path / "out"
    with pytest.raises(ContainerBuildError) as info:
        container_build(broken / "manifest.yaml", tmp_path, cpu_image, docker_client)
    message = str(info.value)
    assert info.value.exit_code == 2
    assert "failed inside the container" in message
    assert "nope" in message  # the container's own error, not a docker trace
    assert_nothing_left(docker_client, out)


@pytest.mark.parametrize(
    ("limits", "error", "says"),
    [
        pytest.param(
            ContainerLimits(memory="96m"),
            ContainerResourceError,
            ("exceeded its memory limit (96m)", "TRT_EDGE_CONTAINER_MEMORY"),
            id="memory",
        ),
        pytest.param(
            ContainerLimits(timeout_s=3.0),
            ContainerTimeoutError,
            ("ran longer than 3 s and was killed", "TRT_EDGE_CONTAINER_TIMEOUT"),
            id="timeout",
        ),
    ],
)
def test_build_over_a_limit_is_stopped_naming_the_limit_and_leaves_nothing(
    manifest: Path,
    cpu_image: str,
    docker_client: DockerClient,
    tmp_path: Path,
    limits: ContainerLimits,
    error: type[Exception],
    says: tuple[str, str],
) -> None:
    """Killed (memory) or stopped (timeout) by the limit; the message names the limit and
    the variable that raises it."""
    with pytest.raises(error) as info:
        container_build(manifest, tmp_path, cpu_image, docker_client, limits=limits)
    for words in says:
        assert words in str(info.value)
    assert_nothing_left(docker_client, tmp_path / "out")


def wait_for_our_container_start(client: DockerClient, out_dir: Path, since: float) -> None:
    """Until a build container of `out_dir` starts: Docker's event stream, replayed from
    `since` (a start before the call is not missed) and closed by the engine 180 s on."""
    events = client.events(
        since=int(since),
        until=int(since + TIMEOUT_S),
        decode=True,
        filters={"type": "container", "event": "start", "label": CONTAINER_LABEL},
    )
    try:
        for event in events:  # other tests' builds start too: ours are those mounting out_dir
            if any(c.id == event["Actor"]["ID"] for c in ours(client, out_dir)):
                return
    finally:
        events.close()
    raise AssertionError(f"no build container of {out_dir} started within {TIMEOUT_S:g} s")


def test_killed_build_leaves_nothing(
    manifest: Path, cpu_image: str, docker_client: DockerClient, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    outcome: dict[str, BaseException] = {}

    def run() -> None:
        try:
            container_build(manifest, tmp_path, cpu_image, docker_client)
        except BaseException as err:  # recorded for the main thread
            outcome["error"] = err

    since = time.time()
    worker = threading.Thread(target=run)
    worker.start()
    wait_for_our_container_start(docker_client, out, since)
    for container in ours(docker_client, out):
        container.kill()
    worker.join(120)
    assert not worker.is_alive()
    error = outcome.get("error")
    assert isinstance(error, ContainerResourceError)
    assert "killed by signal 9" in str(error)
    assert_nothing_left(docker_client, out)


def test_sigterm_to_the_cli_removes_the_container_and_leaves_no_bundle(
    manifest: Path, cpu_image: str, docker_client: DockerClient, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    since = time.time()
    process = subprocess.Popen(
        container_build_command(manifest, tmp_path, cpu_image),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for_our_container_start(docker_client, out, since)
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert_nothing_left(docker_client, out)


def test_missing_image_names_the_fixing_command(
    manifest: Path, docker_client: DockerClient, tmp_path: Path
) -> None:
    with pytest.raises(ImageMissingError) as info:
        build_in_container(
            manifest,
            BuildOptions(out_dir=tmp_path / "out"),
            None,
            "trt-edge/no-such-image:0",
            client=docker_client,
            echo=quiet,
        )
    assert info.value.exit_code == 2
    assert "`trt-edge images build cpu`" in str(info.value)


def test_tensorrt_target_without_gpu_is_refused_clearly(
    manifest: Path, docker_client: DockerClient, tmp_path: Path
) -> None:
    from trt_edge.containers.gpu import host_gpus

    if host_gpus():
        pytest.skip("this host has NVIDIA GPUs")
    with pytest.raises(ContainerBuildError) as info:
        build_in_container(
            manifest,
            BuildOptions(out_dir=tmp_path / "out", backend="tensorrt"),
            "x86-ampere",
            None,
            client=docker_client,
        )
    assert info.value.exit_code == 2
    assert "needs TensorRT" in str(info.value) and "no NVIDIA GPU" in str(info.value)
    assert "--backend xnnpack" in str(info.value)


def test_an_xnnpack_bundle_for_a_jetson_builds_in_the_cpu_builder_and_asks_only_arch(
    manifest: Path,
    container_bundle: Path,
    cpu_image: str,
    docker_client: DockerClient,
    tmp_path: Path,
) -> None:
    """An XNNPACK .pte does not depend on the CPU: the cpu builder makes it for an Orin, the
    same bytes as for x86, and its fingerprint asks a device its CPU architecture only."""
    project = tmp_path / "linear"
    shutil.copytree(manifest.parent, project)
    text = (project / "manifest.yaml").read_text()
    (project / "manifest.yaml").write_text(
        text.replace("targets: [cpu-x86_64]", "targets: [cpu-x86_64, jetson-orin-nano-jp6]")
    )
    result = build_in_container(
        project / "manifest.yaml",
        BuildOptions(out_dir=tmp_path / "out", cache_dir=tmp_path / "cache", backend="xnnpack"),
        "jetson-orin-nano-jp6",
        None,  # no --image: the choice is the tool's
        client=docker_client,
        echo=quiet,
    )
    doc = json.loads((result.bundle_dir / "bundle.json").read_text())
    builder = doc["provenance"]["builder"]
    assert (builder["mode"], builder["image_name"], builder["backend"]) == (
        "container",
        "cpu",
        "xnnpack",
    )
    assert builder["image_id"] == docker_client.images.get(cpu_image).id
    assert (
        "a .pte lowered with xnnpack does not depend on the CPU it is built on" in builder["reason"]
    )
    assert doc["target"] == {"id": "jetson-orin-nano-jp6", "kind": "jetson", "arch": "aarch64"}
    assert (result.bundle_dir / "model.pte").read_bytes() == (
        container_bundle / "model.pte"
    ).read_bytes()


def test_choose_mode_prefers_a_current_image_and_explains_otherwise(
    docker_client: DockerClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TRT_EDGE_BUILD_MODE", raising=False)
    current = build_image("cpu", client=docker_client)  # current for this very checkout
    mode = choose_mode("cpu-x86_64", None)
    assert (mode.kind, current.tag in mode.reason) == ("container", True)
    # What the choice found is what the build runs with: nothing is looked up again.
    assert mode.setup is not None and mode.setup.image is not None
    assert (mode.setup.target.id, mode.setup.builder.image) == ("cpu-x86_64", "cpu")
    assert (mode.setup.image.tag, mode.setup.lock) == (current.tag, None)
    from trt_edge.containers.gpu import host_gpus

    mode = choose_mode("x86-ampere", None, backend="tensorrt")
    assert mode.kind == "local"
    if host_gpus():
        assert "`trt-edge images build x86-trt`" in mode.reason
    else:
        assert "'x86-ampere' with backend tensorrt needs TensorRT" in mode.reason
        assert mode.reason.endswith("; building locally")
        # auto on a host without a GPU builds XNNPACK, which the cpu builder does.
        mode = choose_mode("x86-ampere", None)
        assert (mode.kind, current.tag in mode.reason) == ("container", True)
        assert "auto: x86-ampere runs TensorRT but this host has no NVIDIA GPU" in mode.reason
    assert choose_mode("cpu-x86_64", "local") == BuildMode("local", "--local")
    monkeypatch.setenv("TRT_EDGE_BUILD_MODE", "local")
    assert choose_mode("cpu-x86_64", None) == BuildMode("local", "TRT_EDGE_BUILD_MODE=local")


def test_choose_mode_with_a_stale_image_builds_locally_and_says_how_to_fix(
    cpu_image: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A changed Dockerfile makes every existing cpu image stale: never run stale code."""
    images = tmp_path / "images"
    shutil.copytree(catalog.images_dir(), images)
    dockerfile = images / "cpu" / "Dockerfile"
    dockerfile.write_text(dockerfile.read_text() + "# changed\n")
    monkeypatch.setenv(catalog.IMAGES_DIR_ENV, str(images))
    monkeypatch.delenv("TRT_EDGE_BUILD_MODE", raising=False)
    mode = choose_mode("cpu-x86_64", None)
    assert mode.kind == "local"
    assert "no current builder image trt-edge/cpu" in mode.reason
    assert "`trt-edge images build cpu`" in mode.reason


def test_a_container_build_never_reuses_stages_computed_on_the_host(
    manifest: Path,
    local_bundle: Path,
    cpu_image: str,
    docker_client: DockerClient,
    tmp_path: Path,
) -> None:
    """The stage cache the local build warmed: the container build recomputes every stage
    (another environment), then finds its own entries; the host's are still there."""
    cache = local_bundle.parent.parent / "cache"  # the local_bundle fixture's cache
    local = json.loads((local_bundle / "bundle.json").read_bytes())["provenance"]
    options = BuildOptions(out_dir=tmp_path / "first", cache_dir=cache)
    first = build_in_container(manifest, options, None, cpu_image, client=docker_client, echo=quiet)
    assert first.cached == {stage: False for stage in first.cached}
    doc = json.loads((first.bundle_dir / "bundle.json").read_bytes())["provenance"]
    env = doc["environment"]
    assert env["kind"] == "container" and env["id"] != local["environment"]["id"]
    assert env["image_id"] == env["builder_image_id"] == docker_client.images.get(cpu_image).id
    assert env["requirements_lock_sha256"] is None and doc["builder"]["requirements"] is None
    assert doc["stages"] == {
        stage: {"cached": False, "computed_in": env["id"]}
        for stage in ("export", "lower", "validate")
    }
    options = BuildOptions(out_dir=tmp_path / "second", cache_dir=cache)
    second = build_in_container(
        manifest, options, None, cpu_image, client=docker_client, echo=quiet
    )
    assert second.cached["lower"] and second.cached["validate"]
    again = json.loads((second.bundle_dir / "bundle.json").read_bytes())["provenance"]
    assert again["stages"] == {
        stage: {"cached": True, "computed_in": env["id"]} for stage in ("lower", "validate")
    }
    assert (second.bundle_dir / "model.pte").read_bytes() == (
        local_bundle / "model.pte"
    ).read_bytes()
    host = build(manifest, BuildOptions(out_dir=tmp_path / "host", cache_dir=cache))
    assert host.cached["lower"] and host.cached["validate"]
    assert json.loads((host.bundle_dir / "bundle.json").read_bytes())["provenance"]["stages"][
        "lower"
    ] == {"cached": True, "computed_in": local["environment"]["id"]}
