"""A real OCI registry for tests and benchmarks: Debian's `docker-registry` (CNCF
distribution 2.8), started on a free loopback port with its storage in a temporary folder.

`.ci/sysdeps` installs it; without it the tests that need it skip locally and fail in CI
(`CI=true` or `TRT_EDGE_REQUIRE_DOCKER=1`), as the containers tests do. The storage layout
is distribution's (`docker/registry/v2/blobs/sha256/AB/ABCD…/data`), which the tampering
test writes into directly — as a compromised registry would.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import ssl
import subprocess
import urllib.error
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
  addr: {address}:{port}
log:
  level: warn
"""
# TLS with a certificate for 127.0.0.1, and basic auth from an htpasswd file (bcrypt).
SECURE = """\
  tls:
    certificate: {cert}
    key: {key}
auth:
  htpasswd:
    realm: trt-edge-tests
    path: {htpasswd}
"""
USER, PASSWORD = "fleet", "correct horse battery staple"


def registry_binary() -> str | None:
    """Debian installs it as /usr/bin/docker-registry; PATH first, for other layouts."""
    return shutil.which(BINARY) or shutil.which(BINARY, path="/usr/bin:/usr/sbin")


def registry_required() -> bool:
    return os.environ.get("CI") == "true" or os.environ.get("TRT_EDGE_REQUIRE_DOCKER") == "1"


@dataclass(frozen=True)
class OciRegistry:
    host: str  # 127.0.0.1:PORT
    storage: Path
    log: Path
    ca_file: Path | None = None  # a TLS registry's certificate (self-signed: its own CA)
    credentials: Path | None = None  # a `registry-credentials` file its htpasswd accepts

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


def _tls_answers(registry: OciRegistry) -> bool:
    """The TLS registry's API check answers (401 without credentials: it is up)."""
    context = ssl.create_default_context(cafile=str(registry.ca_file))
    try:
        with urllib.request.urlopen(f"https://{registry.host}/v2/", timeout=2, context=context):
            return True
    except urllib.error.HTTPError as exc:
        return exc.code == 401


def _answers(url: str) -> bool:
    with urllib.request.urlopen(url, timeout=2) as response:
        return bool(response.status == 200)


def _self_signed(workdir: Path) -> tuple[Path, Path]:
    """A certificate and key for 127.0.0.1 (the certificate is its own CA)."""
    import datetime as dt
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=7))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = workdir / "cert.pem", workdir / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


def _htpasswd(workdir: Path) -> tuple[Path, Path]:
    """An htpasswd file (bcrypt, by the C library's crypt(3)) and the matching credentials."""
    import crypt  # deprecated in 3.11, gone in 3.13: the one bcrypt this machine has

    path = workdir / "htpasswd"
    path.write_text(f"{USER}:{crypt.crypt(PASSWORD, crypt.mksalt(crypt.METHOD_BLOWFISH))}\n")
    credentials = workdir / "credentials.json"
    credentials.write_text(json.dumps({"username": USER, "password": PASSWORD}))
    return path, credentials


@contextmanager
def running_registry(
    binary: str, workdir: Path, *, secure: bool = False, address: str = "127.0.0.1"
) -> Iterator[OciRegistry]:
    """A registry process on a free port of `address` (loopback by default; the namespaced
    devices' service address in `tests/helpers/nat_fleet.py`) until the block ends (stopped by
    its pid); `secure`: TLS with a self-signed certificate for 127.0.0.1 and basic auth."""
    workdir.mkdir(parents=True, exist_ok=True)
    storage = workdir / "storage"
    port = _free_port()
    config = workdir / "config.yml"
    text = CONFIG.format(root=storage, port=port, address=address)
    ca_file = credentials = None
    if secure:
        ca_file, key = _self_signed(workdir)
        htpasswd, credentials = _htpasswd(workdir)
        text += SECURE.format(cert=ca_file, key=key, htpasswd=htpasswd)
        text = text.replace("log:\n  level: warn\n", "") + "log:\n  level: warn\n"
    config.write_text(text)
    log = workdir / "registry.log"
    with log.open("wb") as out:
        process = subprocess.Popen([binary, "serve", str(config)], stdout=out, stderr=out)
    try:
        registry = OciRegistry(f"{address}:{port}", storage, log, ca_file, credentials)

        def up() -> bool:
            if process.poll() is not None:
                raise AssertionError(f"docker-registry exited: {log.read_text()}")
            if secure:
                return _tls_answers(registry)
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
