"""Session fixtures: real OCI registries (`tests.helpers.registry`), one per test session
and pytest-xdist worker, for the areas that publish and follow (`tests/follow`,
`tests/serve`). Without `docker-registry` they skip locally and fail in CI."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.helpers.registry import OciRegistry, registry_binary, registry_required, running_registry


def _binary() -> str:
    binary = registry_binary()
    if binary is None:
        reason = "docker-registry is not installed (.ci/sysdeps installs it)"
        if registry_required():
            pytest.fail(f"CI: {reason}", pytrace=False)
        pytest.skip(reason)
    return binary


@pytest.fixture(scope="session")
def oci_registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OciRegistry]:
    """Plain http on loopback, no auth."""
    with running_registry(_binary(), tmp_path_factory.mktemp("oci-registry")) as registry:
        yield registry


@pytest.fixture(scope="session")
def secure_registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OciRegistry]:
    """TLS (a self-signed certificate for 127.0.0.1) and basic auth (htpasswd)."""
    workdir = tmp_path_factory.mktemp("oci-registry-tls")
    with running_registry(_binary(), workdir, secure=True) as registry:
        yield registry
