"""The device image's default command is the service, reached from the host like any client.

One `cpu-runtime` container, started with no command (the image's `serve`), an API key and
an SSH key, its port 8000 published on the host's loopback. It comes up with nothing
installed (live, not ready); a fleet-style install over SSH puts the tiny bundle into the
active slot and the service follows it; then, from the host through the published port,
`/v2/health/ready` answers, a KServe v2 infer gives the eager model's output, the API key
is required off the probes, and Docker's HEALTHCHECK says healthy. A stop is graceful (exit
0) and a start serves the installed slot at once: what a device reboot does.
"""

from __future__ import annotations

import io
import secrets
import subprocess
import tarfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import numpy as np
import pytest

from tests.helpers.bundles import eager
from tests.helpers.fixtures_bundles import Bundles
from tests.helpers.waits import wait_until

if TYPE_CHECKING:
    import torch
    from docker import DockerClient

pytestmark = [pytest.mark.docker, pytest.mark.slow]

TIMEOUT_S = 180.0  # a loaded 2-core machine: the service imports, loads and smoke-runs
IDS = [[3, 1, 4, 1]]
SCALE = [0.5]


def put_files(container: Any, folder: str, files: dict[str, bytes]) -> None:
    """Copy files into a container's `folder` through the Docker API (a tar stream)."""
    container.exec_run(["mkdir", "-p", folder])
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    assert container.put_archive(folder, buffer.getvalue())


def wait_for(container: Any, what: str, check: Callable[[], bool]) -> None:
    """Until `check` holds (an HTTP probe, which no event replaces); fail with the container's
    log if it exits first or the generous TIMEOUT_S passes."""

    def look() -> bool:
        container.reload()
        if container.status == "exited":
            pytest.fail(f"the container exited before {what}:\n{container.logs().decode()}")
        return check()

    wait_until(
        look,
        what,
        timeout_s=TIMEOUT_S,
        ignoring=(httpx.HTTPError,),
        context=lambda: container.logs().decode(),
    )


def published_url(container: Any) -> str:
    container.reload()
    [binding] = container.attrs["NetworkSettings"]["Ports"]["8000/tcp"]
    return f"http://127.0.0.1:{binding['HostPort']}"


def status(url: str) -> int:
    return httpx.get(url, timeout=5).status_code


@pytest.fixture
def service_container(
    docker_client: DockerClient, runtime_image: str, tmp_path: Path
) -> Iterator[tuple[Any, str, Path]]:
    """The running container (default command), its API key and an SSH key that reaches it."""
    key = tmp_path / "id_ed25519"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    api_key = secrets.token_hex(16)
    container = docker_client.containers.run(
        runtime_image,
        detach=True,
        environment={
            "TRT_EDGE_API_KEY": api_key,
            "SSH_AUTHORIZED_KEYS": key.with_suffix(".pub").read_text().strip(),
        },
        ports={"8000/tcp": ("127.0.0.1", None)},  # a free port on the host's loopback
        mem_limit="1g",
    )
    try:
        yield container, api_key, key
    finally:
        container.remove(force=True)


def ssh_install(container: Any, key: Path, tar: str) -> subprocess.CompletedProcess[str]:
    address = container.attrs["NetworkSettings"]["IPAddress"]
    ssh = ["ssh", "-i", str(key), "-o", "StrictHostKeyChecking=no", "-o", "BatchMode=yes"]
    ssh += ["-o", "UserKnownHostsFile=/dev/null", "-o", "ConnectTimeout=5", f"root@{address}"]
    # sshd starts beside the service, detached, its log gone: until it answers, ssh exits 255.
    return wait_until(
        lambda: subprocess.run(
            [*ssh, f"trt-edge-device install {tar}"], capture_output=True, text=True, check=False
        ),
        "sshd in the container answering",
        until=lambda done: done.returncode != 255,
        timeout_s=TIMEOUT_S,
    )


def infer(url: str, api_key: str | None) -> httpx.Response:
    body = {
        "inputs": [
            {"name": "ids", "shape": [1, len(IDS[0])], "datatype": "INT64", "data": IDS},
            {"name": "scale", "shape": [1], "datatype": "FP32", "data": SCALE},
        ],
        "parameters": {"phase": "prefill"},
    }
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    return httpx.post(f"{url}/v2/models/tiny/infer", json=body, headers=headers, timeout=30)


def hidden(response: httpx.Response) -> np.ndarray:
    assert response.status_code == 200, response.text
    [output] = response.json()["outputs"]
    assert output["name"] == "hidden" and output["shape"] == [1, len(IDS[0]), 8]
    return np.asarray(output["data"], dtype=np.float32).reshape(output["shape"])


def test_the_default_command_serves_the_active_slot_to_the_host(
    service_container: tuple[Any, str, Path],
    agent_bundles: Bundles,
    tiny_model: torch.nn.Module,
) -> None:
    container, api_key, ssh_key = service_container
    url = published_url(container)
    wait_for(container, "/v2/health/live", lambda: status(f"{url}/v2/health/live") == 200)
    assert status(f"{url}/v2/health/ready") == 503  # nothing installed yet

    # A fleet's install, over SSH, while the service runs: it follows the active slot.
    trusted = (agent_bundles.keys / "publisher.pub").read_bytes()
    put_files(container, "/etc/trt-edge/keys", {"publisher.pub": trusted})
    put_files(container, "/var/tmp", {"v1.tar": agent_bundles.v1.read_bytes()})
    done = ssh_install(container, ssh_key, "/var/tmp/v1.tar")
    assert done.returncode == 0, done.stdout + done.stderr
    wait_for(container, "/v2/health/ready", lambda: status(f"{url}/v2/health/ready") == 200)

    expected = eager(tiny_model, np.array(IDS, dtype=np.int64), np.array(SCALE, np.float32))
    np.testing.assert_allclose(hidden(infer(url, api_key)), expected, rtol=1e-5, atol=1e-5)
    assert infer(url, None).status_code == 401  # bound off loopback: the key is required
    wait_for(container, "a healthy HEALTHCHECK", lambda: health(container) == "healthy")

    # A reboot: a graceful stop, then the installed slot is served from the start.
    container.stop(timeout=30)
    container.reload()
    assert container.attrs["State"]["ExitCode"] == 0, container.logs().decode()[-3000:]
    container.start()
    url = published_url(container)
    wait_for(container, "ready after a restart", lambda: status(f"{url}/v2/health/ready") == 200)
    np.testing.assert_allclose(hidden(infer(url, api_key)), expected, rtol=1e-5, atol=1e-5)


def health(container: Any) -> str:
    state: dict[str, Any] = container.attrs["State"]
    return str(state.get("Health", {}).get("Status", "none"))
