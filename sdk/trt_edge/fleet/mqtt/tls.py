"""A private CA and the broker's server certificate, for a fleet without a PKI of its own.

`trt-edge fleet broker-config` makes them once (kept on re-runs: the devices already
trust that CA): an ECDSA P-256 CA valid ten years and a server certificate it signs for
the broker's host names and addresses (subjectAltName, which TLS clients check). A fleet
with its own PKI passes its files instead. Written through `durable.write_atomic`, the
private keys 0600.
"""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from trt_edge_runner.durable import write_atomic

CA_DAYS = 3650
SERVER_DAYS = 825  # what public CAs may not exceed; clients check it


@dataclass(frozen=True)
class TlsFiles:
    ca_cert: Path
    server_cert: Path
    server_key: Path


def _names(hosts: list[str]) -> list[object]:
    from cryptography import x509

    names: list[object] = []
    for host in hosts:
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            names.append(x509.DNSName(host))
    return names


def make_ca_and_server(folder: Path, hosts: list[str]) -> TlsFiles:
    """Write `ca.crt`, `ca.key`, `server.crt`, `server.key` into `folder`, unless the CA
    is already there (then only the files that are missing)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    files = TlsFiles(folder / "ca.crt", folder / "server.crt", folder / "server.key")
    ca_key_path = folder / "ca.key"
    now = datetime.datetime.now(datetime.UTC)

    def pem_key(key: ec.EllipticCurvePrivateKey) -> bytes:
        return key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )

    if files.ca_cert.is_file() and ca_key_path.is_file():
        ca_key = serialization.load_pem_private_key(ca_key_path.read_bytes(), password=None)
        ca_cert = x509.load_pem_x509_certificate(files.ca_cert.read_bytes())
        assert isinstance(ca_key, ec.EllipticCurvePrivateKey)
    else:
        ca_key = ec.generate_private_key(ec.SECP256R1())
        ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "trt-edge fleet CA")])
        ca_cert = (
            x509.CertificateBuilder()
            .subject_name(ca_name)
            .issuer_name(ca_name)
            .public_key(ca_key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=CA_DAYS))
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=False,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    key_cert_sign=True,
                    crl_sign=True,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .sign(ca_key, hashes.SHA256())
        )
        write_atomic(ca_key_path, pem_key(ca_key), mode=0o600)
        write_atomic(files.ca_cert, ca_cert.public_bytes(serialization.Encoding.PEM))
    if files.server_cert.is_file() and files.server_key.is_file():
        return files
    server_key = ec.generate_private_key(ec.SECP256R1())
    server = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, hosts[0])]))
        .issuer_name(ca_cert.subject)
        .public_key(server_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=SERVER_DAYS))
        .add_extension(x509.SubjectAlternativeName(_names(hosts)), critical=False)  # type: ignore[arg-type]
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    write_atomic(files.server_key, pem_key(server_key), mode=0o600)
    write_atomic(files.server_cert, server.public_bytes(serialization.Encoding.PEM))
    return files
