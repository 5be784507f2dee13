"""A registry that needs what real ones need: TLS (verified against `--ca-file`) and
credentials (`--credentials`, basic auth from distribution's htpasswd)."""

from __future__ import annotations

import json

from tests.agent.device import Device
from tests.follow.test_follow import bundle_dir, host
from tests.helpers.fixtures_bundles import Bundles
from tests.helpers.registry import OciRegistry


def test_publish_and_follow_over_tls_with_credentials(
    secure_registry: OciRegistry, agent_bundles: Bundles, device: Device
) -> None:
    assert secure_registry.ca_file is not None and secure_registry.credentials is not None
    access = ["--ca-file", str(secure_registry.ca_file)]
    access += ["--credentials", str(secure_registry.credentials)]
    ref = secure_registry.ref("fleet/tls", "1.0.0")
    published = host("publish", str(bundle_dir(agent_bundles.v1)), ref, "--tag", "stable", *access)
    assert published.returncode == 0, published.stdout + published.stderr

    channel = secure_registry.ref("fleet/tls", "stable")
    result = device.run("follow", channel, "--once", "--json", "--smoke-runs", "1", *access)
    assert result.returncode == 0, result.stdout + result.stderr
    assert json.loads(result.stdout)["outcome"] == "installed"
    assert device.status()["version"] == "1.0.0"


def test_without_credentials_the_refusal_says_to_pass_them(
    secure_registry: OciRegistry, device: Device
) -> None:
    assert secure_registry.ca_file is not None
    channel = secure_registry.ref("fleet/tls", "stable")
    result = device.run(
        "follow", channel, "--once", "--json", "--ca-file", str(secure_registry.ca_file)
    )
    assert result.returncode == 1, result.stdout + result.stderr
    error = json.loads(result.stdout)
    assert "401" in error["error"] and "--credentials" in error["hint"]
    assert "Traceback" not in result.stderr
