"""Fixtures of the publish/follow tests: one real OCI registry per test session (per xdist
worker), a device agent in a temporary directory, and the signed tiny bundles."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.agent.device import Device
from tests.helpers.fixtures_bundles import Bundles
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
    with running_registry(_binary(), tmp_path_factory.mktemp("oci-registry")) as registry:
        yield registry


@pytest.fixture(scope="session")
def secure_registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OciRegistry]:
    """TLS (a self-signed certificate for 127.0.0.1) and basic auth (htpasswd)."""
    workdir = tmp_path_factory.mktemp("oci-registry-tls")
    with running_registry(_binary(), workdir, secure=True) as registry:
        yield registry


@pytest.fixture
def device(tmp_path: Path, agent_bundles: Bundles, trt_edge_run: Path) -> Device:
    facts = tmp_path / "facts.json"
    facts.write_text(json.dumps({"arch": "x86_64"}))
    return Device(
        root=tmp_path / "var-lib-trt-edge",
        keys=agent_bundles.keys,
        facts=facts,
        config=tmp_path / "device.json",
        runner=trt_edge_run,
    )
