"""A running service follows what `trt-edge-device follow` installs: the follower installs a
new version from the registry through the agent's transaction, and the service, watching the
agent's `state.json`, swaps to it (as after `install`: tests/serve/test_hot_swap.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from tests.agent.device import Device
from tests.follow.bundle_variants import variant
from tests.follow.test_follow import followed, publish
from tests.helpers.registry import OciRegistry
from tests.helpers.waits import wait_until
from tests.serve.conftest import metric, start_service

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("llm-qwen3")]


def test_a_running_service_swaps_to_the_version_follow_installs(
    oci_registry: OciRegistry,
    mini_bundle: Callable[[str], Path],
    trt_edge_run: Path,
    tmp_path: Path,
) -> None:
    from trt_edge.signing import generate_keypair

    pair = generate_keypair(tmp_path / "keys")
    trusted = tmp_path / "trusted"
    trusted.mkdir()
    (trusted / "publisher.pub").write_bytes(pair.public_path.read_bytes())
    facts = tmp_path / "facts.json"
    facts.write_text(json.dumps({"arch": "x86_64"}))
    device = Device(tmp_path / "root", trusted, facts, tmp_path / "device.json", trt_edge_run)
    first = variant(mini_bundle("qwen3"), tmp_path / "v1", "1.0.0", pair.private_path)
    second = variant(first, tmp_path / "v2", "1.1.0", pair.private_path)
    channel = oci_registry.ref("fleet/served", "stable")
    publish(first, oci_registry.ref("fleet/served", "1.0.0"), "stable")
    followed(device, channel)

    served = start_service(trt_edge_run, [], tmp_path / "service.log", env=device.env())
    try:
        served.wait_ready()

        def serves(version: str, slot: str) -> bool:
            text = httpx.get(f"{served.url}/metrics", timeout=30).text
            info = metric(
                text, "trt_edge_bundle_info", name="mini-qwen3", version=version, slot=slot
            )
            return info == 1

        assert serves("1.0.0", "A")
        publish(second, oci_registry.ref("fleet/served", "1.1.0"), "stable")
        assert followed(device, channel)["outcome"] == "installed"
        wait_until(
            lambda: serves("1.1.0", "B"),
            "the service serving 1.1.0 from slot B",
            ignoring=(httpx.HTTPError,),
            context=served.log_text,
        )
        assert not serves("1.0.0", "A")
    finally:
        served.stop()
