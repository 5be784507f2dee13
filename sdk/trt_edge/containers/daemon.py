"""Connecting to the Docker daemon, with one clear message per way it can fail.

The docker SDK reports a stopped daemon, a missing socket and a permission problem
as the same `DockerException` wrapping a requests error; users need to know which
one it is and the command that fixes it.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from trt_edge.containers.errors import DockerPermissionError, DockerUnavailableError

if TYPE_CHECKING:
    from docker import DockerClient

FIX_START = (
    "start it with `sudo systemctl start docker` (or `sudo dockerd &` where there is no "
    "systemd), or set DOCKER_HOST to a reachable engine; `--local` builds without Docker"
)
FIX_PERMISSION = (
    "add yourself to the docker group: `sudo usermod -aG docker $USER` then log in again "
    "(or run `newgrp docker`); or run the command with sudo"
)


def describe_host() -> str:
    return os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"


def connect(timeout: int = 600) -> DockerClient:
    """A client whose daemon answered `ping`; typed errors with the fixing command otherwise."""
    try:
        import docker
        import docker.errors
    except ImportError as err:  # pragma: no cover - docker is a declared dependency
        raise DockerUnavailableError(
            "the docker Python SDK is not installed: `pip install docker`"
        ) from err
    try:
        client = docker.from_env(timeout=timeout)
        client.ping()
    except docker.errors.DockerException as err:
        raise classify(err) from err
    return client


def classify(err: BaseException) -> DockerUnavailableError | DockerPermissionError:
    text = str(err)
    host = describe_host()
    if "Permission denied" in text or "PermissionError" in text or "EACCES" in text:
        return DockerPermissionError(
            f"permission denied on the Docker socket {host}; {FIX_PERMISSION}"
        )
    return DockerUnavailableError(f"no Docker engine answers at {host}; {FIX_START}")


def reachable() -> bool:
    """Whether a daemon answers (quietly; for choosing a default)."""
    try:
        connect(timeout=10).close()
    except (DockerUnavailableError, DockerPermissionError):
        return False
    return True


def is_daemon_error(err: BaseException) -> bool:
    """An error raised by the docker SDK or its HTTP stack (daemon gone, API refusal)."""
    return type(err).__module__.split(".")[0] in ("docker", "requests", "urllib3")
