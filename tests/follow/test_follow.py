"""Publish to a real OCI registry (docker-registry on loopback), follow a channel on a device
agent in a temporary directory: installs, shared blobs, tampering, anti-rollback, a follower
killed mid-download, a device that was offline for several releases.

Everything goes through the real command lines (`trt-edge publish/promote`,
`trt-edge-device follow/status`) and the real C++ runner's smoke runs.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import random
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from trt_edge_runner.link.desired import Desired, PullTarget, write_desired

from tests.agent.device import Device
from tests.follow.bundle_variants import variant
from tests.helpers.fixtures_bundles import Bundles
from tests.helpers.registry import OciRegistry
from tests.helpers.waits import wait_until

MIB = 1 << 20


def host(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "trt_edge", *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def publish(bundle: Path, ref: str, *tags: str) -> str:
    result = host("publish", str(bundle), ref, *(a for t in tags for a in ("--tag", t)))
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def promote(ref: str, channel: str) -> None:
    result = host("promote", ref, channel)
    assert result.returncode == 0, result.stdout + result.stderr


def follow_once(device: Device, ref: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return device.run("follow", ref, "--once", "--json", "--smoke-runs", "1", *extra)


def followed(device: Device, ref: str) -> dict[str, Any]:
    result = follow_once(device, ref)
    assert result.returncode == 0, result.stdout + result.stderr
    doc: dict[str, Any] = json.loads(result.stdout)
    return doc


def bundle_dir(tar: Path) -> Path:
    return tar.with_suffix("")


def doc_bytes(bundle: Path) -> int:
    return (bundle / "bundle.json").stat().st_size + (bundle / "bundle.sig").stat().st_size


@pytest.fixture
def repo(request: pytest.FixtureRequest) -> str:
    """A repository of its own per test (the registry is shared by the session)."""
    return "fleet/" + str(request.node.name).removeprefix("test_").replace("_", "-")[:60]


def test_publish_then_follow_installs_the_channel_bundle(
    oci_registry: OciRegistry, agent_bundles: Bundles, device: Device, repo: str
) -> None:
    v1 = bundle_dir(agent_bundles.v1)
    out = publish(v1, oci_registry.ref(repo, "1.0.0"), "stable")
    assert "tags 1.0.0, stable" in out

    first = followed(device, oci_registry.ref(repo, "stable"))
    assert first["outcome"] == "installed"
    assert device.status()["version"] == "1.0.0"
    bundle_bytes = sum(p.stat().st_size for p in v1.iterdir())
    assert first["bytes_fetched"] == bundle_bytes

    again = followed(device, oci_registry.ref(repo, "stable"))
    assert again["outcome"] == "up_to_date"
    assert again["bytes_fetched"] == 0


def test_a_version_sharing_the_weights_fetches_only_the_changed_blobs(
    oci_registry: OciRegistry, agent_bundles: Bundles, device: Device, repo: str
) -> None:
    v1, v2 = bundle_dir(agent_bundles.v1), bundle_dir(agent_bundles.v2)
    publish(v1, oci_registry.ref(repo, "1.0.0"), "stable")
    followed(device, oci_registry.ref(repo, "stable"))
    out = publish(v2, oci_registry.ref(repo, "2.0.0"))
    assert "1 already there" in out  # model.pte: one blob for both versions in the registry
    promote(oci_registry.ref(repo, "2.0.0"), "stable")

    doc = followed(device, oci_registry.ref(repo, "stable"))
    assert doc["outcome"] == "installed"
    assert device.status()["version"] == "2.0.0"
    assert doc["bytes_fetched"] == doc_bytes(v2)  # bundle.json and bundle.sig, no weights
    assert doc["blobs_reused"] == 1


def test_a_tampered_blob_in_the_registry_is_refused(
    oci_registry: OciRegistry, agent_bundles: Bundles, device: Device, repo: str, tmp_path: Path
) -> None:
    tokenizer = b'{"model": {"vocab": {"a": 0}}}' * 100
    v11 = variant(
        bundle_dir(agent_bundles.v1),
        tmp_path / "v1.1",
        "1.1.0",
        agent_bundles.key,
        {"tokenizer.json": tokenizer},
    )
    publish(v11, oci_registry.ref(repo, "1.1.0"), "stable")
    digest = json.loads((v11 / "bundle.json").read_bytes())["files"]["tokenizer.json"]["sha256"]
    stored = oci_registry.blob_data(f"sha256:{digest}")
    stored.write_bytes(stored.read_bytes().replace(b'"a"', b'"b"'))  # same size, other bytes

    result = follow_once(device, oci_registry.ref(repo, "stable"))
    assert result.returncode == 1, result.stdout + result.stderr
    error = json.loads(result.stdout)
    assert "tokenizer.json" in error["error"] and "sha256" in error["error"]
    assert "tampered" in error["hint"]
    assert not (device.root / "state.json").exists() or device.status().get("version") is None
    assert not list((device.root / "follow/blobs/sha256").glob("*.partial"))


def test_an_older_signed_version_on_the_channel_is_refused(
    oci_registry: OciRegistry, agent_bundles: Bundles, device: Device, repo: str
) -> None:
    publish(bundle_dir(agent_bundles.v1), oci_registry.ref(repo, "1.0.0"))
    publish(bundle_dir(agent_bundles.v2), oci_registry.ref(repo, "2.0.0"), "stable")
    followed(device, oci_registry.ref(repo, "stable"))
    promote(oci_registry.ref(repo, "1.0.0"), "stable")  # someone moves the channel back

    result = follow_once(device, oci_registry.ref(repo, "stable"))
    assert result.returncode == 1, result.stdout + result.stderr
    assert "anti-rollback" in json.loads(result.stdout)["error"]
    assert device.status()["version"] == "2.0.0"
    state = json.loads((device.root / "follow/state.json").read_bytes())
    assert state["outcome"] == "refused"
    assert state["bytes_fetched"] == doc_bytes(bundle_dir(agent_bundles.v1))  # no weights


def test_a_follower_killed_mid_download_resumes_without_refetching(
    oci_registry: OciRegistry, agent_bundles: Bundles, device: Device, repo: str, tmp_path: Path
) -> None:
    asset = random.Random(31).randbytes(12 * MIB)
    big = variant(
        bundle_dir(agent_bundles.v1), tmp_path / "big", "1.2.0", agent_bundles.key, {"a.bin": asset}
    )
    publish(big, oci_registry.ref(repo, "1.2.0"), "stable")
    ref = oci_registry.ref(repo, "stable")
    slow = device.popen(
        ["follow", ref, "--once", "--smoke-runs", "1", "--max-rate-kib", "2048"], extra_env={}
    )
    partials = device.root / "follow/blobs/sha256"

    def partial_size() -> int:
        sizes = [p.stat().st_size for p in partials.glob("*.partial")] if partials.is_dir() else []
        if slow.poll() is not None:
            raise AssertionError(f"the follower exited before it was killed: {slow.communicate()}")
        return max(sizes, default=0)

    wait_until(partial_size, "a partial download past 1 MiB", until=lambda n: n >= MIB)
    os.kill(slow.pid, signal.SIGKILL)
    slow.communicate()
    kept = max(p.stat().st_size for p in partials.glob("*.partial"))
    assert 0 < kept < len(asset)

    doc = followed(device, ref)
    assert doc["outcome"] == "installed"
    assert device.status()["version"] == "1.2.0"
    everything = sum(p.stat().st_size for p in big.iterdir())
    assert doc["bytes_fetched"] <= everything - kept  # what the killed run had is not fetched again
    assert doc["bytes_fetched"] >= len(asset) - kept


def test_an_offline_device_catches_up_to_the_channel_in_one_step(
    oci_registry: OciRegistry, agent_bundles: Bundles, device: Device, repo: str, tmp_path: Path
) -> None:
    v2 = bundle_dir(agent_bundles.v2)
    v3 = variant(v2, tmp_path / "v3", "3.0.0", agent_bundles.key)
    publish(bundle_dir(agent_bundles.v1), oci_registry.ref(repo, "1.0.0"), "stable")
    followed(device, oci_registry.ref(repo, "stable"))
    # The device is offline while two releases go out.
    publish(v2, oci_registry.ref(repo, "2.0.0"), "stable")
    publish(v3, oci_registry.ref(repo, "3.0.0"), "stable")

    doc = followed(device, oci_registry.ref(repo, "stable"))
    assert doc["outcome"] == "installed"
    assert device.status()["version"] == "3.0.0"
    history = json.loads((device.root / "state.json").read_bytes())["history"]
    assert [e["version"] for e in history if e["action"] == "install"] == ["1.0.0", "3.0.0"]
    assert doc["bytes_fetched"] == doc_bytes(v3)


def test_the_loop_installs_then_finds_the_channel_up_to_date(
    oci_registry: OciRegistry, agent_bundles: Bundles, device: Device, repo: str
) -> None:
    publish(bundle_dir(agent_bundles.v1), oci_registry.ref(repo, "1.0.0"), "stable")
    result = device.run(
        "follow", oci_registry.ref(repo, "stable"), "--max-polls", "2", "--interval-s", "1",
        "--smoke-runs", "1",
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    lines = [line for line in result.stdout.splitlines() if line.startswith(("installed", "up_to"))]
    assert [line.split(":")[0] for line in lines[:2]] == ["installed", "up_to_date"]
    assert device.status()["version"] == "1.0.0"


def test_a_refusal_is_remembered_until_the_tag_moves(
    oci_registry: OciRegistry, agent_bundles: Bundles, device: Device, repo: str
) -> None:
    publish(bundle_dir(agent_bundles.v2), oci_registry.ref(repo, "2.0.0"), "stable")
    followed(device, oci_registry.ref(repo, "stable"))
    publish(bundle_dir(agent_bundles.v1), oci_registry.ref(repo, "1.0.0"), "stable")
    first = follow_once(device, oci_registry.ref(repo, "stable"))
    again = follow_once(device, oci_registry.ref(repo, "stable"))
    assert first.returncode == again.returncode == 1
    error = json.loads(again.stdout)
    assert "refused before, and the tag has not moved" in error["error"]
    assert "state.json" in error["hint"]
    state = json.loads((device.root / "follow/state.json").read_bytes())
    assert state["bytes_fetched"] == 0  # nothing fetched again
    assert state["detail"] == json.loads(first.stdout)["error"]  # the first reason, kept


def test_a_second_follower_on_the_device_is_refused(
    oci_registry: OciRegistry, device: Device, repo: str
) -> None:
    lock = device.root / "follow/follow.lock"
    lock.parent.mkdir(parents=True)
    with lock.open("w") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)
        result = follow_once(device, oci_registry.ref(repo, "stable"))
    assert result.returncode == 1, result.stdout + result.stderr
    assert "another follower is polling" in json.loads(result.stdout)["error"]


def test_the_blob_store_keeps_only_what_the_two_slots_hold(
    oci_registry: OciRegistry, agent_bundles: Bundles, device: Device, repo: str, tmp_path: Path
) -> None:
    v1, v2 = bundle_dir(agent_bundles.v1), bundle_dir(agent_bundles.v2)
    v3 = variant(v2, tmp_path / "v3", "3.0.0", agent_bundles.key)
    for bundle, version in ((v1, "1.0.0"), (v2, "2.0.0"), (v3, "3.0.0")):
        publish(bundle, oci_registry.ref(repo, version), "stable")
        followed(device, oci_registry.ref(repo, "stable"))
    stored = {p.name for p in (device.root / "follow/blobs/sha256").iterdir()}
    v1_doc = hashlib.sha256((v1 / "bundle.json").read_bytes()).hexdigest()
    kept = {hashlib.sha256((b / "bundle.json").read_bytes()).hexdigest() for b in (v2, v3)}
    model = json.loads((v3 / "bundle.json").read_bytes())["files"]["model.pte"]["sha256"]
    assert v1_doc not in stored  # slot of 1.0.0 was overwritten by 3.0.0
    assert kept | {model} <= stored


def test_what_the_device_was_told_comes_before_the_channel(
    oci_registry: OciRegistry, agent_bundles: Bundles, device: Device, repo: str
) -> None:
    """desired.json (the MQTT link's): a hold installs nothing new, a target is fetched
    instead of the channel's tag, and a target in another repository is refused."""
    v1, v2 = bundle_dir(agent_bundles.v1), bundle_dir(agent_bundles.v2)
    publish(v1, oci_registry.ref(repo, "1.0.0"), "stable")
    publish(v2, oci_registry.ref(repo, "2.0.0"), "canary")
    channel = oci_registry.ref(repo, "stable")

    def tell(hold: bool, target: str | None, command: str) -> None:
        version = None if target is None else target.rsplit(":", 1)[1]
        write_desired(
            device.root,
            Desired(
                hold,
                None if target is None else PullTarget(target, version or ""),
                command,
                "2026-12-07T12:00:00Z",
            ),
        )

    device.root.mkdir(parents=True, exist_ok=True)
    tell(True, None, "hold-1")
    held = followed(device, channel)
    assert held["outcome"] == "held" and "hold-1" in held["detail"]
    assert held["bytes_fetched"] == 0 and device.status()["active"] is None

    tell(False, oci_registry.ref(repo, "2.0.0"), "wave-1")
    doc = followed(device, channel)
    assert doc["outcome"] == "installed" and device.status()["version"] == "2.0.0"

    tell(False, oci_registry.ref("elsewhere/other", "9.0.0"), "wave-2")
    refused = follow_once(device, channel)
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert "is not in the followed repository" in json.loads(refused.stdout)["error"]
    assert device.status()["version"] == "2.0.0"


def test_with_a_health_check_a_failing_bundle_is_rolled_back_and_refused(
    oci_registry: OciRegistry, agent_bundles: Bundles, device: Device, repo: str
) -> None:
    """A device following a channel alone (`--health-check`): a bundle that fails the health
    check after install is rolled back at once and not retried until the tag moves."""
    v1, v2 = bundle_dir(agent_bundles.v1), bundle_dir(agent_bundles.v2)
    channel = oci_registry.ref(repo, "stable")
    publish(v1, oci_registry.ref(repo, "1.0.0"), "stable")
    assert followed(device, channel)["outcome"] == "installed"
    # From now on no run meets this device's budget: every health check fails.
    device.config.write_text(json.dumps({"health": {"latency_budget_ms": 1e-6}}))
    publish(v2, oci_registry.ref(repo, "2.0.0"), "stable")

    result = follow_once(device, channel, "--health-check")
    assert result.returncode == 1, result.stdout + result.stderr
    error = json.loads(result.stdout)["error"]
    assert "2.0.0 failed its health check after install" in error, error
    assert "latency budget" in error and "rolled back to tiny 1.0.0" in error
    assert device.status()["version"] == "1.0.0"
    again = follow_once(device, channel, "--health-check")
    assert again.returncode == 1 and "the tag has not moved" in json.loads(again.stdout)["error"]
    assert device.status()["version"] == "1.0.0"
