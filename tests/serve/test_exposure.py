"""Who may reach the service, checked on a real service that has nothing installed yet (no
engine needed): with an API key every route but the health probes wants `Bearer KEY`; TLS
serves HTTPS from the given certificate; `live` answers while `ready` says 503 until a model
passed its smoke run; off loopback without a key the service refuses to start."""

from __future__ import annotations

import datetime as dt
import ipaddress
import os
import ssl
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.helpers.waits import wait_until
from tests.serve.conftest import Served, start_service


def self_signed(work: Path) -> tuple[Path, Path]:
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
        .not_valid_before(now - dt.timedelta(minutes=1))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = work / "cert.pem", work / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


def wait_live(served: Served, scheme: str = "http", verify: bool | ssl.SSLContext = True) -> str:
    url = served.url.replace("http://", f"{scheme}://")
    wait_until(
        lambda: served.probe("/v2/health/live", url, verify=verify),
        f"the service live at {url}",
        until=lambda status: status == 200,
        ignoring=(httpx.HTTPError,),
        context=served.log_text,
    )
    return url


def test_an_api_key_guards_every_route_but_the_probes(tmp_path: Path, trt_edge_run: Path) -> None:
    served = start_service(
        trt_edge_run, ["--root", tmp_path / "empty-root"], tmp_path / "log",
        env={"TRT_EDGE_API_KEY": "s3cret"},
    )  # fmt: skip
    try:
        url = wait_live(served)
        assert httpx.get(f"{url}/v2/health/ready").status_code == 503  # nothing installed
        for path in ("/v1/models", "/metrics", "/v2/models/x"):
            refused = httpx.get(f"{url}{path}")
            assert refused.status_code == 401, path
            assert refused.headers["www-authenticate"] == "Bearer"
            wrong = httpx.get(f"{url}{path}", headers={"Authorization": "Bearer nope"})
            assert wrong.status_code == 401
        allowed = httpx.get(f"{url}/v1/models", headers={"Authorization": "Bearer s3cret"})
        assert allowed.status_code == 503  # past the key; no model loaded yet
        assert "nothing is installed" in allowed.json()["error"]["message"]
        metrics = httpx.get(f"{url}/metrics", headers={"Authorization": "Bearer s3cret"})
        assert metrics.status_code == 200 and "trt_edge_queue_depth" in metrics.text
    finally:
        served.stop()


def test_tls_serves_https_from_the_given_certificate(tmp_path: Path, trt_edge_run: Path) -> None:
    cert, key = self_signed(tmp_path)
    served = start_service(
        trt_edge_run,
        ["--root", tmp_path / "empty-root", "--tls-cert", cert, "--tls-key", key],
        tmp_path / "log",
    )
    try:
        url = wait_live(served, "https", ssl.create_default_context(cafile=str(cert)))
        assert url.startswith("https://")
        with pytest.raises(httpx.HTTPError):
            httpx.get(f"{served.url}/v2/health/live", timeout=5)  # plain HTTP is not served
    finally:
        served.stop()


def test_off_loopback_without_a_key_refuses_to_start(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "trt_edge_runner.device_cli", "serve", "--host", "0.0.0.0",
         "--root", str(tmp_path)],
        capture_output=True, text=True, timeout=120, check=False,
        env={k: v for k, v in os.environ.items() if k != "TRT_EDGE_API_KEY"},
    )  # fmt: skip
    assert done.returncode == 2
    assert "0.0.0.0" in done.stderr and "API key" in done.stderr
    assert "Traceback" not in done.stderr
