"""ed25519 key pairs for signing bundles: `NAME.key` (PKCS#8 PEM, mode 0600) and `NAME.pub`.

The `.pub` file is what a device trusts: copy it into the device's trusted keys
directory (`/etc/trt-edge/keys` by default). The private key is written
unencrypted because signing runs in CI; keep the directory private.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from trt_edge_runner.durable import write_atomic
from trt_edge_runner.signature import PUBLIC_KEY_SUFFIX, key_id, load_pem_key

from trt_edge.signing.errors import SigningError

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

PRIVATE_KEY_SUFFIX = ".key"
DEFAULT_KEY_NAME = "trt-edge-signing"


@dataclass(frozen=True)
class KeyPair:
    private_path: Path
    public_path: Path
    key_id: str


def generate_keypair(directory: Path, name: str = DEFAULT_KEY_NAME, force: bool = False) -> KeyPair:
    """Write a new key pair into `directory`; refuses to overwrite one unless `force`."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    private_path = directory / f"{name}{PRIVATE_KEY_SUFFIX}"
    public_path = directory / f"{name}{PUBLIC_KEY_SUFFIX}"
    existing = [p for p in (private_path, public_path) if p.exists()]
    if existing and not force:
        raise SigningError(
            f"{existing[0]}: already exists; refusing to overwrite a signing key "
            "(pass --force to replace it, or choose another --name)"
        )
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SigningError(f"{directory}: cannot create key directory: {exc.strerror}") from None
    key = Ed25519PrivateKey.generate()
    private_pem = key.private_bytes(
        encoding=serialization.Encoding.PEM,
        format=serialization.PrivateFormat.PKCS8,
        encryption_algorithm=serialization.NoEncryption(),
    )
    public_pem = key.public_key().public_bytes(
        encoding=serialization.Encoding.PEM,
        format=serialization.PublicFormat.SubjectPublicKeyInfo,
    )
    write_atomic(private_path, private_pem, mode=0o600)
    write_atomic(public_path, public_pem, mode=0o644)
    return KeyPair(private_path, public_path, key_id(key.public_key()))


def load_private_key(path: Path) -> Ed25519PrivateKey:
    """Read a PEM ed25519 private key, refusing anything else with a message naming the file."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    key: Ed25519PrivateKey = load_pem_key(
        path,
        "private key",
        lambda data: serialization.load_pem_private_key(data, password=None),
        Ed25519PrivateKey,
        "not an unencrypted PEM private key; use the .key file written by `trt-edge keys generate`",
        SigningError,
    )
    return key
