"""The device's trust store through the real CLIs: `trt-edge keys rotate|revoke` on the host,
`trt-edge-device trust add|status`, `install` and `rollback` on the device.

Unknown, revoked, expired and retired keys are refused naming the key id; a rotated key
is accepted once the device has the statement signed by the key it trusts; a rolled-back
revocation list (or one that changes a version, or drops a revoked key) is refused.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest
from trt_edge.cli.main import main as host
from trt_edge.signing import generate_keypair, load_private_key
from trt_edge_runner.signature import key_id, load_public_key
from trt_edge_runner.trust import REVOCATIONS_TYPE, TRUST_SPEC, seal

from tests.agent.device import Device
from tests.helpers.fixtures_bundles import Bundles


@dataclasses.dataclass(frozen=True)
class Keys:
    publisher: Path  # private key of the anchor the agent bundles are signed with
    publisher_id: str
    recovery: Path  # a second anchor, kept offline: signs revocations and rotations
    recovery_id: str
    work: Path


@pytest.fixture
def keys(tmp_path: Path, agent_bundles: Bundles) -> Keys:
    work = tmp_path / "host-keys"
    recovery = generate_keypair(work, name="recovery")
    return Keys(
        agent_bundles.key,
        key_id(load_private_key(agent_bundles.key).public_key()),
        recovery.private_path,
        recovery.key_id,
        work,
    )


@pytest.fixture
def trusting(device: Device, keys: Keys, tmp_path: Path) -> Device:
    """The device with its own keys directory: the publisher and the recovery anchors."""
    own = tmp_path / "device-keys"
    shutil.copytree(device.keys, own)
    shutil.copy(keys.recovery.with_suffix(".pub"), own / "recovery.pub")
    return dataclasses.replace(device, keys=own)


def host_ok(*argv: str) -> None:
    assert host(list(argv)) == 0, argv


def rotate(current: Path, new: Path, *extra: str) -> Path:
    host_ok("keys", "rotate", "--current", str(current), "--new", str(new), *extra)
    return new.with_name(new.name + ".rotation.json")


def revoke(signer: Path, listing: Path, *ids: str, reason: str = "leaked") -> Path:
    host_ok(
        "keys", "revoke", *ids, "--key", str(signer), "--list", str(listing), "--reason", reason
    )
    return listing


def test_unknown_key_is_refused_naming_its_id(trusting: Device, agent_bundles: Bundles) -> None:
    other = key_id(load_private_key(agent_bundles.other_private).public_key())
    refused = trusting.run("install", str(agent_bundles.other_key))
    assert refused.returncode == 1 and "Traceback" not in refused.stderr
    assert f"signed by key {other}, which is not trusted here" in refused.stderr
    assert "trust add" in refused.stderr  # the hint


def test_rotated_key_is_accepted_after_the_statement_and_the_old_key_is_retired(
    trusting: Device, agent_bundles: Bundles, keys: Keys, tmp_path: Path
) -> None:
    trusting.run("install", str(agent_bundles.v1), check=True)
    statement = rotate(keys.publisher, keys.work / "2027", "--not-after", "2099-12-31")
    new_key = keys.work / "2027.key"
    new_id = key_id(load_public_key(keys.work / "2027.pub"))
    by_new = agent_bundles.make(tmp_path / "new", "2.0.0", key=new_key)

    before = trusting.run("install", str(by_new))
    assert before.returncode == 1 and f"signed by key {new_id}, which is not trusted" in (
        before.stderr
    )

    added = trusting.run("trust", "add", str(statement), "--json", check=True)
    outcome = json.loads(added.stdout)["accepted"][0]
    assert outcome["changed"] and f"key {new_id} trusted" in outcome["outcome"]
    again = trusting.run("trust", "add", str(statement), "--json", check=True)
    assert json.loads(again.stdout)["accepted"][0]["changed"] is False

    trusting.run("install", str(by_new), check=True)
    assert trusting.status()["version"] == "2.0.0"

    by_old = agent_bundles.make(tmp_path / "old", "3.0.0")
    retired = trusting.run("install", str(by_old))
    assert retired.returncode == 1
    assert (
        f"signed by key {keys.publisher_id}, which was retired on" in retired.stderr
        and f"by the rotation to key {new_id}" in retired.stderr
    )
    # What the old key signed before stays usable: rolling back to 1.0.0 is allowed.
    trusting.run("rollback", check=True)
    assert trusting.status()["version"] == "1.0.0"

    table = json.loads(trusting.run("trust", "status", "--json", check=True).stdout)["keys"]
    states = {row["key_id"]: (row["status"], row["not_after"]) for row in table}
    assert states[new_id] == ("trusted", "2099-12-31T23:59:59Z")
    assert states[keys.publisher_id][0] == "retired"


def test_keep_old_rotation_leaves_both_keys_trusted(
    trusting: Device, agent_bundles: Bundles, keys: Keys, tmp_path: Path
) -> None:
    statement = rotate(keys.publisher, keys.work / "overlap", "--keep-old")
    trusting.run("trust", "add", str(statement), check=True)
    trusting.run("install", str(agent_bundles.v1), check=True)
    by_new = agent_bundles.make(tmp_path / "new", "2.0.0", key=keys.work / "overlap.key")
    trusting.run("install", str(by_new), check=True)


def test_revoked_key_is_refused_naming_it_and_so_is_a_rollback_to_what_it_signed(
    trusting: Device, agent_bundles: Bundles, keys: Keys, tmp_path: Path
) -> None:
    trusting.run("install", str(agent_bundles.v1), check=True)  # signed by the publisher
    # The recovery key vouches for a new signing key, and stays an anchor (--keep-old).
    statement = rotate(keys.recovery, keys.work / "ci-2027", "--keep-old")
    trusting.run("trust", "add", str(statement), check=True)
    by_new = agent_bundles.make(tmp_path / "new", "2.0.0", key=keys.work / "ci-2027.key")
    trusting.run("install", str(by_new), check=True)

    listing = revoke(keys.recovery, tmp_path / "revocations.json", keys.publisher_id)
    trusting.run("trust", "add", str(listing), check=True)
    refused = trusting.run("install", str(agent_bundles.make(tmp_path / "v3", "3.0.0")))
    assert refused.returncode == 1
    assert f"signed by key {keys.publisher_id}, which is revoked (leaked" in refused.stderr
    assert "revocation list v1" in refused.stderr

    back = trusting.run("rollback")
    assert back.returncode == 1
    assert f"signed by key {keys.publisher_id}, which is revoked" in back.stderr
    assert trusting.status()["version"] == "2.0.0"


def test_a_key_rotated_in_by_a_revoked_key_loses_trust(
    trusting: Device, agent_bundles: Bundles, keys: Keys, tmp_path: Path
) -> None:
    """A leaked key could have signed any rotation: once it is revoked, no key it rotated in
    counts any more (the recovery anchor re-vouches for a key by rotating it in itself)."""
    statement = rotate(keys.publisher, keys.work / "successor")
    trusting.run("trust", "add", str(statement), check=True)
    listing = revoke(keys.recovery, tmp_path / "revocations.json", keys.publisher_id)
    trusting.run("trust", "add", str(listing), check=True)
    by_successor = agent_bundles.make(tmp_path / "s", "2.0.0", key=keys.work / "successor.key")
    refused = trusting.run("install", str(by_successor))
    assert refused.returncode == 1
    assert f"it was rotated in by key {keys.publisher_id}, which is revoked" in refused.stderr


def test_locally_revoked_and_expired_keys_are_refused_naming_them(
    trusting: Device, agent_bundles: Bundles, keys: Keys, tmp_path: Path
) -> None:
    policy = trusting.keys / "keys.json"
    policy.write_text(json.dumps({"not_after": {keys.publisher_id: "2001-01-01T00:00:00Z"}}))
    expired = trusting.run("install", str(agent_bundles.v1))
    assert expired.returncode == 1
    assert f"signed by key {keys.publisher_id}, which expired on 2001-01-01T00:00:00Z" in (
        expired.stderr
    )
    policy.write_text(json.dumps({"revoked": {keys.publisher_id: "lost laptop"}}))
    revoked = trusting.run("install", str(agent_bundles.v1))
    assert revoked.returncode == 1
    assert f"which is revoked (lost laptop; {policy})" in revoked.stderr
    policy.write_text('{"revoked": ["not-an-object"]}')
    broken = trusting.run("install", str(agent_bundles.v1))
    assert broken.returncode == 2 and "keys.json" in broken.stderr


def test_a_rotated_in_key_expires_at_its_not_after(
    trusting: Device, agent_bundles: Bundles, keys: Keys, tmp_path: Path
) -> None:
    statement = rotate(keys.publisher, keys.work / "short", "--not-after", "2001-06-30")
    trusting.run("trust", "add", str(statement), check=True)
    short_id = key_id(load_public_key(keys.work / "short.pub"))
    bundle = agent_bundles.make(tmp_path / "b", "1.0.0", key=keys.work / "short.key")
    refused = trusting.run("install", str(bundle))
    assert refused.returncode == 1
    assert f"signed by key {short_id}, which expired on 2001-06-30T23:59:59Z" in refused.stderr


def test_a_rolled_back_revocation_list_is_refused(
    trusting: Device, keys: Keys, tmp_path: Path
) -> None:
    listing = tmp_path / "revocations.json"
    first = revoke(keys.recovery, listing, "11" * 32)
    v1 = tmp_path / "revocations-v1.json"
    shutil.copy(first, v1)
    revoke(keys.recovery, listing, "22" * 32)  # version 2, both revoked
    trusting.run("trust", "add", str(listing), check=True)

    rolled_back = trusting.run("trust", "add", str(v1))
    assert rolled_back.returncode == 1
    assert (
        "revocation list version 1 is older than version 2, which this device already "
        "accepted (rolled back)"
    ) in rolled_back.stderr

    recovery = load_private_key(keys.recovery)

    def signed_list(version: int, revoked: dict[str, str]) -> Path:
        doc = {
            "type": REVOCATIONS_TYPE,
            "spec": TRUST_SPEC,
            "version": version,
            "issued_at": "2026-12-01T00:00:00Z",
            "revoked": revoked,
        }
        path = tmp_path / f"crafted-{version}-{len(revoked)}.json"
        path.write_bytes(seal(doc, keys.recovery_id, recovery.sign).to_json())
        return path

    same_version = trusting.run("trust", "add", str(signed_list(2, {"33" * 32: "x"})))
    assert same_version.returncode == 1
    assert "(same version, other content)" in same_version.stderr
    drops = trusting.run("trust", "add", str(signed_list(3, {"22" * 32: "leaked"})))
    assert drops.returncode == 1
    assert f"omits key(s) {'11' * 32} that an earlier list revoked" in drops.stderr
    state = json.loads((trusting.root / "state.json").read_text())
    assert state["trust"]["revocations_version"] == 2


def test_a_list_pre_empted_by_a_leaked_key_can_still_revoke_it(
    trusting: Device, keys: Keys, tmp_path: Path
) -> None:
    """Whoever holds a leaked key may publish an empty list with a huge version first; a lower
    version that revokes the key which signed the stored list is accepted all the same."""
    publisher = load_private_key(keys.publisher)
    doc = {
        "type": REVOCATIONS_TYPE,
        "spec": TRUST_SPEC,
        "version": 10**9,
        "issued_at": "2026-12-01T00:00:00Z",
        "revoked": {},
    }
    squat = tmp_path / "squat.json"
    squat.write_bytes(seal(doc, keys.publisher_id, publisher.sign).to_json())
    trusting.run("trust", "add", str(squat), check=True)
    listing = revoke(keys.recovery, tmp_path / "revocations.json", keys.publisher_id)
    trusting.run("trust", "add", str(listing), check=True)
    table = json.loads(trusting.run("trust", "status", "--json", check=True).stdout)["keys"]
    assert {r["key_id"]: r["status"] for r in table}[keys.publisher_id] == "revoked"
    replay = trusting.run("trust", "add", str(squat))
    assert replay.returncode == 1 and f"by key {keys.publisher_id}, which is revoked" in (
        replay.stderr
    )


def test_trust_documents_are_accepted_all_or_none(
    trusting: Device, keys: Keys, agent_bundles: Bundles, tmp_path: Path
) -> None:
    statement = rotate(keys.publisher, keys.work / "next", "--keep-old")
    tampered = tmp_path / "tampered.rotation.json"
    doc = json.loads(statement.read_text())
    doc["signed"]["new_key"]["not_after"] = "2199-01-01T00:00:00Z"
    tampered.write_text(json.dumps(doc))
    refused = trusting.run("trust", "add", str(statement), str(tampered))
    assert refused.returncode == 1
    assert f"the signature by key {keys.publisher_id} does not match the document" in (
        refused.stderr
    )
    assert not (trusting.root / "state.json").exists()  # nothing was recorded
    untrusted = rotate(agent_bundles.other_private, keys.work / "rogue")
    rogue = trusting.run("trust", "add", str(untrusted))
    assert rogue.returncode == 1 and "rotation signed by key" in rogue.stderr
    assert "which is not trusted here" in rogue.stderr
