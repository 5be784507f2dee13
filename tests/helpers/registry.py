"""A real OCI registry for tests and benchmarks: Debian's `docker-registry` (CNCF
distribution 2.8), started on a free loopback port with its storage in a temporary folder.

`.ci/sysdeps` installs it; without it the tests that need it skip locally and fail in CI
(`CI=true` or `TRT_EDGE_REQUIRE_DOCKER=1`), as the containers tests do. The storage layout
is distribution's (`docker/registry/v2/blobs/sha256/AB/ABCD…/data`), which the tampering
test writes into directly — as a compromised registry would.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.helpers.waits import wait_until

BINARY = "docker-registry"
CONFIG = """\
version: 0.1
storage:
  filesystem:
    rootdirectory: {root}
  delete:
    enabled: true
http:
  addr: 127.0.0.1:{port}
log:
  level: warn
"""


def registry_binary() -> str | None:
    return shutil.which(BINARY) or next(
        (p for p in ("/usr/bin/docker-registry",) if os.access(p, os.X_OK)), None
    )


def registry_required() -> bool:
    return os.environ.get("CI") == "true" or os.environ.get("TRT_EDGE_REQUIRE_DOCKER") == "1"


@dataclass(frozen=True)
class OciRegistry:
    host: str  # 127.0.0.1:PORT
    storage: Path
    log: Path

    def ref(self, repository: str, tag: str) -> str:
        return f"{self.host}/{repository}:{tag}"

    def blob_data(self, digest: str) -> Path:
        """Where distribution keeps blob `digest` (`sha256:HEX`) on disk."""
        hex_ = digest.removeprefix("sha256:")
        return self.storage / "docker/registry/v2/blobs/sha256" / hex_[:2] / hex_ / "data"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _answers(url: str) -> bool:
    with urllib.request.urlopen(url, timeout=2) as response:
        return bool(response.status == 200)


@contextmanager
def running_registry(binary: str, workdir: Path) -> Iterator[OciRegistry]:
    """A registry process on a free loopback port until the block ends (stopped by its pid)."""
    workdir.mkdir(parents=True, exist_ok=True)
    storage = workdir / "storage"
    port = _free_port()
    config = workdir / "config.yml"
    config.write_text(CONFIG.format(root=storage, port=port))
    log = workdir / "registry.log"
    with log.open("wb") as out:
        process = subprocess.Popen([binary, "serve", str(config)], stdout=out, stderr=out)
    try:
        registry = OciRegistry(f"127.0.0.1:{port}", storage, log)

        def up() -> bool:
            if process.poll() is not None:
                raise AssertionError(f"docker-registry exited: {log.read_text()}")
            return _answers(f"http://{registry.host}/v2/")

        wait_until(up, "docker-registry answering /v2/", ignoring=(OSError,))
        yield registry
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
