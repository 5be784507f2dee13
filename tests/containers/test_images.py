"""The CPU images, built for real by the session fixtures, and `trt-edge images`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from trt_edge import __version__
from trt_edge.containers import catalog
from trt_edge.containers.images import ImageRef, build_image
from trt_edge.containers.listing import list_images
from trt_edge.containers.lockfile import parse_lock

from tests.helpers.waits import read_until

if TYPE_CHECKING:
    from docker import DockerClient

pytestmark = pytest.mark.docker


def run_in(client: DockerClient, image: str, *command: str) -> str:
    output: bytes = client.containers.run(
        image, list(command), entrypoint=[], remove=True, network_mode="none"
    )
    return output.decode()


def test_runtime_image_is_lean_no_torch_executorch_or_numpy(
    docker_client: DockerClient, runtime_image: str
) -> None:
    """Bundles run in the C++ runner; the device agent needs cryptography, its service the
    serve extra (an ASGI stack, metrics, the tokenizer and chat template)."""
    wanted = ("cryptography", "starlette", "uvicorn", "prometheus_client", "tokenizers", "jinja2")
    probe = (
        "import importlib.util as u; "
        "print(' '.join(m for m in ('torch', 'executorch', 'numpy', "
        f"{', '.join(map(repr, wanted))}, 'trt_edge_runner') if u.find_spec(m)))"
    )
    for python in ("trt-edge-python", "/usr/bin/python3", "python3"):
        found = run_in(docker_client, runtime_image, python, "-c", probe).split()
        expected = [*wanted, "trt_edge_runner"] if python != "/usr/bin/python3" else []
        assert found == expected, (python, found)
    for module in ("torch", "executorch", "numpy"):
        done = docker_client.containers.run(
            runtime_image,
            ["sh", "-c", f"python3 -c 'import {module}' 2>&1; echo exit=$?"],
            entrypoint=[],
            remove=True,
            network_mode="none",
        ).decode()
        assert "ModuleNotFoundError" in done and "exit=1" in done, (module, done)
    assert "usage" in run_in(docker_client, runtime_image, "trt-edge-device", "--help").lower()


RTX_PROBE = """
import importlib.metadata as m, json, os, re, sys
import tensorrt_rtx as trt, onnx, onnxscript, executorch.exir
trt.Builder(trt.Logger())  # no GPU here: TensorRT-RTX builds engines on the CPU
pins = re.findall(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\\S+)", open(sys.argv[1]).read(), re.M)
print(json.dumps({"trt": trt.__version__, "installed": {n: m.version(n) for n, _ in pins},
                  "nvidia_env": sorted(k for k in os.environ if k.startswith("NVIDIA_"))}))
"""


def test_x86_rtx_builder_holds_its_lock_and_makes_a_tensorrt_rtx_builder_without_a_gpu(
    docker_client: DockerClient, x86_rtx_image_ref: ImageRef
) -> None:
    """The x86-rtx builder: every locked distribution at its locked version (the cpu
    builder's stack, TensorRT for RTX, whose front-end sdists were built in the image, and
    the ONNX exporter), importable as an unprivileged user with the network off, a
    TensorRT-RTX Builder made without a GPU, and no NVIDIA runtime settings."""
    spec = catalog.load_spec("x86-rtx")
    lock = parse_lock(spec.lock_file)
    output = docker_client.containers.run(
        x86_rtx_image_ref.tag,
        ["python", "-c", RTX_PROBE, "/lock/lock.txt"],
        remove=True,
        network_mode="none",
        user=f"{os.getuid()}:{os.getgid()}",
        volumes={str(spec.folder): {"bind": "/lock", "mode": "ro"}},
    ).decode()
    doc = json.loads(output.strip().splitlines()[-1])
    assert doc["trt"] == lock.by_key()["tensorrt-rtx"].version
    assert doc["installed"] == {e.name: e.version for e in lock.entries}
    assert doc["nvidia_env"] == []
    labels = x86_rtx_image_ref.labels
    assert (labels[catalog.LABEL_IMAGE], labels[catalog.LABEL_ROLE]) == ("x86-rtx", "builder")
    assert labels[catalog.LABEL_LOCK] == lock.sha256()


def _runner_json(doc: dict[str, object]) -> dict[str, object]:
    """What must agree between two runs: all but where the bundle is and how long it took."""
    return {k: v for k, v in doc.items() if k not in ("bundle", "latency_ms")}


def test_runtime_image_runs_a_bundle_like_the_host_runner(
    docker_client: DockerClient,
    runtime_image: str,
    tiny_llm_bundle: Path,
    x86_64_runner_tarball: Path,
    tmp_path: Path,
) -> None:
    from trt_edge.containers.runner_tarball import check, unpack

    host = tmp_path / "host-runner"
    unpack(check(x86_64_runner_tarball, "x86_64"), host)
    for phase in ("decode", "prefill"):
        (tmp_path / phase / "host").mkdir(parents=True)
        (tmp_path / phase / "image").mkdir()
        args = ["--phase", phase, "--json"]
        host_out = str(tmp_path / phase / "host")
        host_runner = str(host / "bin" / "trt-edge-run")
        on_host = subprocess.run(
            [host_runner, "--bundle", str(tiny_llm_bundle), *args, "--outputs", host_out],
            capture_output=True,
            text=True,
            check=True,
        )
        in_image = docker_client.containers.run(
            runtime_image,
            ["trt-edge-run", "--bundle", "/bundle", *args, "--outputs", "/out"],
            entrypoint=[],
            remove=True,
            network_mode="none",
            user=f"{os.getuid()}:{os.getgid()}",
            volumes={
                str(tiny_llm_bundle): {"bind": "/bundle", "mode": "ro"},
                str(tmp_path / phase / "image"): {"bind": "/out", "mode": "rw"},
            },
        ).decode()
        host_doc = json.loads(on_host.stdout.strip().splitlines()[-1])
        image_doc = json.loads(in_image.strip().splitlines()[-1])
        assert _runner_json(image_doc) == _runner_json(host_doc), phase
        assert image_doc["digests_verified"] is True
        outputs = sorted(p.name for p in (tmp_path / phase / "host").iterdir())
        assert outputs and outputs == sorted(p.name for p in (tmp_path / phase / "image").iterdir())
        for name in outputs:  # the same binary on the same CPU: the same bytes
            host_bytes = (tmp_path / phase / "host" / name).read_bytes()
            assert (tmp_path / phase / "image" / name).read_bytes() == host_bytes, name


def test_runtime_image_labels_name_the_lock_and_version(runtime_image_ref: ImageRef) -> None:
    spec = catalog.load_spec("cpu-runtime")
    labels = runtime_image_ref.labels
    assert labels[catalog.LABEL_LOCK] == parse_lock(spec.lock_file).sha256()
    assert labels[catalog.LABEL_VERSION] == __version__
    assert labels[catalog.LABEL_IMAGE] == "cpu-runtime"
    assert labels[catalog.LABEL_ROLE] == "runtime"
    assert runtime_image_ref.tag.startswith("trt-edge/cpu-runtime:")


def test_building_again_reuses_the_current_image(
    docker_client: DockerClient, runtime_image_ref: ImageRef
) -> None:
    # Built from the current inputs first: in a shared checkout the sources may have
    # moved on since the session fixture built its image.
    current = build_image("cpu-runtime", client=docker_client)
    again = build_image("cpu-runtime", client=docker_client)
    assert again.reused
    assert again.id == current.id
    assert again.tag == current.tag


def test_images_list_shows_current_runtime_image(
    docker_client: DockerClient, runtime_image_ref: ImageRef
) -> None:
    # Current for this very checkout (a shared checkout's sources may move mid-session).
    runtime_image_ref = build_image("cpu-runtime", client=docker_client)
    rows = [r for r in list_images(docker_client) if r.id == runtime_image_ref.id]
    assert len(rows) == 1
    assert rows[0].current and rows[0].role == "runtime"
    assert runtime_image_ref.tag in rows[0].tags
    assert "trt-edge/cpu-runtime:latest" in rows[0].tags


def test_images_list_cli_json(docker_client: DockerClient, runtime_image_ref: ImageRef) -> None:
    runtime_image_ref = build_image("cpu-runtime", client=docker_client)  # current now
    done = subprocess.run(
        [sys.executable, "-m", "trt_edge", "images", "list", "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    ids = {row["id"]: row for row in json.loads(done.stdout)}
    assert ids[runtime_image_ref.id]["current"] is True


def test_base_image_ships_no_ssh_host_keys_but_runtime_image_has_its_own(
    docker_client: DockerClient, runtime_image: str
) -> None:
    from trt_edge.containers.base_image import load_recipe

    base = load_recipe().tag
    listing = run_in(docker_client, base, "sh", "-c", "ls /etc/ssh/ssh_host_* 2>/dev/null; true")
    assert listing.strip() == ""
    keys = run_in(docker_client, runtime_image, "sh", "-c", "ls /etc/ssh/ssh_host_*_key")
    assert "ssh_host_ed25519_key" in keys


def test_ssh_into_a_runtime_container_runs_the_device_cli(
    docker_client: DockerClient, runtime_image: str, tmp_path: Path
) -> None:
    """What the fleet rollout relies on: sshd up, the key from SSH_AUTHORIZED_KEYS accepted."""
    key = tmp_path / "id_ed25519"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    container = docker_client.containers.run(
        runtime_image,
        ["sshd"],  # the entrypoint's fleet mode: sshd only (the default command is the service)
        detach=True,
        environment={"SSH_AUTHORIZED_KEYS": key.with_suffix(".pub").read_text().strip()},
    )
    try:
        container.reload()
        address = container.attrs["NetworkSettings"]["IPAddress"]
        ssh = [
            "ssh",
            "-i",
            str(key),
            "-o",
            "StrictHostKeyChecking=no",
            "-o",
            "UserKnownHostsFile=/dev/null",
            "-o",
            "ConnectTimeout=5",
            "-o",
            "BatchMode=yes",
            f"root@{address}",
            "trt-edge-device --help && trt-edge-run --help",
        ]
        # `sshd -D -e` says when it listens; the stream ends if the container exits first.
        log = (chunk.decode() for chunk in container.logs(stream=True, follow=True))
        read_until(log, "Server listening", "sshd in the container")
        done = subprocess.run(ssh, capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stderr
        assert "usage: trt-edge-device" in done.stdout.lower()
        assert "usage: trt-edge-run" in done.stdout  # on the PATH ssh sessions get
    finally:
        container.remove(force=True)


@pytest.mark.parametrize(
    ("name", "says"),
    [
        # an unknown image: the known ones are listed
        pytest.param(
            "no-such-image", ["unknown image 'no-such-image'", "cpu-runtime"], id="unknown"
        ),
        pytest.param(
            "x86-ampere", ["image 'x86-trt' cannot be built on this machine"], id="not-here"
        ),
    ],
)
def test_cli_images_build_of_an_image_it_cannot_build_is_bad_input(
    name: str, says: list[str]
) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "trt_edge", "images", "build", name],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    for words in says:
        assert words in done.stderr
    assert "Traceback" not in done.stderr


def test_extra_tag_is_applied(docker_client: DockerClient, runtime_image_ref: ImageRef) -> None:
    ref = build_image("cpu-runtime", client=docker_client, tag="trt-edge-test/runtime:tagged")
    try:
        assert "trt-edge-test/runtime:tagged" in docker_client.images.get(ref.id).tags
    finally:
        docker_client.images.remove("trt-edge-test/runtime:tagged")


def test_cli_build_with_a_missing_base_says_how_to_get_one(docker_client: DockerClient) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "trt_edge", "images", "build", "cpu", "--base", "nope/base:0"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1
    assert "base image 'nope/base:0'" in done.stderr
    assert "trt-edge images base" in done.stderr and "--base IMAGE" in done.stderr
    assert "Traceback" not in done.stderr


def test_prune_removes_stale_images_only(
    docker_client: DockerClient, runtime_image_ref: ImageRef, tmp_path: Path
) -> None:
    from trt_edge.containers.base_image import load_recipe
    from trt_edge.containers.listing import prune_stale

    (tmp_path / "Dockerfile").write_text(
        f"FROM {load_recipe().tag}\n"
        f'LABEL {catalog.LABEL_IMAGE}="prune-probe" {catalog.LABEL_LOCK}="old"\n'
    )
    docker_client.images.build(path=str(tmp_path), tag="trt-edge/prune-probe:old", rm=True)
    removed = prune_stale(docker_client, names=frozenset({"prune-probe"}))
    assert removed == ["trt-edge/prune-probe:old"]
    assert docker_client.images.list("trt-edge/prune-probe") == []
    assert docker_client.images.get(runtime_image_ref.id)  # other images untouched


def test_settings_declared_before_from_reach_the_fragments_on_this_engine(
    docker_client: DockerClient, tmp_path: Path
) -> None:
    """The Jetson images (not buildable here) set APT_PACKAGES/VENV_OPTIONS/PIP_CHECK
    before their first FROM and the fragments re-declare them inside the stage: the
    legacy builder must hand the defaults through, and leave undeclared ones empty."""
    from trt_edge.containers.base_image import load_recipe

    (tmp_path / "Dockerfile").write_text(
        f"ARG BASE={load_recipe().tag}\n"
        'ARG APT_PACKAGES="python3 python3-venv openssh-server"\n'
        "FROM ${BASE} AS system\n"
        "ARG APT_PACKAGES\n"
        "ARG PIP_CHECK\n"
        'RUN test "$APT_PACKAGES" = "python3 python3-venv openssh-server" && test -z "$PIP_CHECK"\n'
    )
    image, _ = docker_client.images.build(path=str(tmp_path), rm=True, nocache=True)
    docker_client.images.remove(image.id)


def test_the_agent_in_a_memory_limited_container_sees_the_limit(
    docker_client: DockerClient, runtime_image: str
) -> None:
    """`docker run --memory 512m`: /proc/meminfo inside is the host's, but what the agent
    judges bundles against (info, install's check, a hot swap) is the cgroup's 512 MiB."""
    output: bytes = docker_client.containers.run(
        runtime_image,
        ["trt-edge-device", "info", "--json"],
        entrypoint=[],
        remove=True,
        network_mode="none",
        mem_limit="512m",
    )
    memory = json.loads(output)["device"]["memory"]
    assert memory["total_bytes"] == 512 << 20, memory
    assert 0 < memory["available_bytes"] <= 512 << 20
    assert "capped by /sys/fs/cgroup/" in memory["source"]
