"""One clear message, with the fixing command, for each way the Docker daemon can be unreachable."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from trt_edge.containers.build_mode import choose_mode
from trt_edge.containers.daemon import connect
from trt_edge.containers.errors import DockerUnavailableError

from tests.helpers.fixtures_docker import skip_or_fail

NOWHERE = "unix:///nonexistent/trt-edge-test.sock"


def test_missing_daemon_names_the_start_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", NOWHERE)
    with pytest.raises(DockerUnavailableError) as info:
        connect(timeout=5)
    assert f"no Docker engine answers at {NOWHERE}" in str(info.value)
    assert "sudo systemctl start docker" in str(info.value)
    assert "--local" in str(info.value)


def test_cli_without_daemon_prints_one_line_not_a_traceback() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "trt_edge", "images", "list"],
        capture_output=True,
        text=True,
        env={**os.environ, "DOCKER_HOST": NOWHERE},
        check=False,
    )
    assert done.returncode == 1
    assert done.stderr.startswith("trt-edge images list: error: no Docker engine answers")
    assert "Traceback" not in done.stderr


def test_default_mode_without_daemon_is_local_with_a_notice(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("DOCKER_HOST", NOWHERE)
    monkeypatch.delenv("TRT_EDGE_BUILD_MODE", raising=False)
    mode = choose_mode("cpu-x86_64", None)
    assert mode.kind == "local"
    assert "no Docker engine reachable" in mode.reason


def test_socket_permission_denied_names_the_group_fix() -> None:
    """A real socket this process may not open: the EACCES a user outside the docker group
    meets. As root, the socket belongs to someone else and the client runs without root's
    override capabilities (setpriv); as another user, a mode-000 socket is enough."""
    as_root = os.geteuid() == 0
    if as_root and shutil.which("setpriv") is None:
        skip_or_fail("running as root without setpriv (util-linux) to drop root's overrides")
    folder = Path(tempfile.mkdtemp(prefix="trt-edge-sock-"))
    try:
        folder.chmod(0o755)
        path = folder / "docker.sock"
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(str(path))
        server.listen(1)
        code = "from trt_edge.containers.daemon import connect; connect(timeout=5)"
        command = [sys.executable, "-c", code]
        if as_root:
            path.chmod(0o600)
            os.chown(path, 65534, 65534)
            drop = "-dac_override,-dac_read_search,-fowner"
            command = ["setpriv", "--bounding-set", drop, "--", *command]
        else:
            path.chmod(0o000)
        done = subprocess.run(
            command,
            capture_output=True,
            text=True,
            env={**os.environ, "DOCKER_HOST": f"unix://{path}"},
            check=False,
        )
        server.close()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    assert done.returncode != 0
    assert "permission denied on the Docker socket" in done.stderr
    assert "usermod -aG docker" in done.stderr


def test_default_mode_for_a_tensorrt_build_without_gpu_is_local(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from trt_edge.containers.gpu import host_gpus

    if host_gpus():
        pytest.skip("this host has NVIDIA GPUs")
    monkeypatch.delenv("TRT_EDGE_BUILD_MODE", raising=False)
    model = Path(__file__).parent / "models" / "linear"
    shutil.copy(model / "model.py", tmp_path / "model.py")
    manifest = tmp_path / "manifest.yaml"
    text = (
        (model / "manifest.yaml")
        .read_text()
        .replace("targets: [cpu-x86_64]", "targets: [x86-ampere]")
    )
    manifest.write_text(text.replace("backend: xnnpack", "backend: tensorrt"))
    mode = choose_mode(None, None, manifest)  # the manifest's first target and backend
    assert mode.kind == "local"
    assert "'x86-ampere' with backend tensorrt needs TensorRT" in mode.reason
    assert "no NVIDIA GPU" in mode.reason
    # The same target with the manifest's CPU backend is the cpu builder's job.
    manifest.write_text(text)
    mode = choose_mode(None, None, manifest)
    assert "TensorRT" not in mode.reason
    assert (
        ("trt-edge/cpu:" in mode.reason)
        if mode.kind == "container"
        else ("trt-edge/cpu " in mode.reason)
    )
