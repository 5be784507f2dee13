"""`trt-edge keys rotate|revoke|id` and `trt-edge pack` through the real CLI.

The documents are checked here for what the host promises (files, signatures, versions
that only go up, revocations kept); what a device does with them is tested in
tests/agent/test_trust.py. `pack` refuses what a device would refuse and writes the
same bytes for the same bundle.
"""

from __future__ import annotations

import tarfile
from pathlib import Path

import pytest
from trt_edge.cli.main import main
from trt_edge_runner.signature import key_id, load_public_key
from trt_edge_runner.trust import Envelope, RevocationList, Rotation

from tests.helpers.bundles import write_bundle
from tests.signing.conftest import sign


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def test_rotate_writes_the_new_pair_and_a_statement_signed_by_the_current_key(
    keys: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    current = keys / "trt-edge-signing.key"
    code, out = cli(
        capsys,
        "keys",
        "rotate",
        "--current",
        str(current),
        "--new",
        str(keys / "2027"),
        "--not-after",
        "2027-12-31",
    )
    assert code == 0, out
    for suffix in (".key", ".pub", ".rotation.json"):
        assert (keys / f"2027{suffix}").is_file()
    assert (keys / "2027.key").stat().st_mode & 0o777 == 0o600
    statement = keys / "2027.rotation.json"
    rotation = Rotation.parse(Envelope.from_json(statement.read_bytes(), "s"), "s")
    old = load_public_key(keys / "trt-edge-signing.pub")
    assert rotation.old_key_id == key_id(old)
    assert rotation.new_key_id == key_id(load_public_key(keys / "2027.pub"))
    assert rotation.retire_old and rotation.envelope.signed_by(rotation.old_key_id, old)
    assert rotation.not_after is not None and rotation.not_after.isoformat().startswith(
        "2027-12-31T23:59:59"
    )
    again, out = cli(
        capsys, "keys", "rotate", "--current", str(current), "--new", str(keys / "2027")
    )
    assert again == 2 and "already exists" in out


def test_revoke_writes_ever_higher_versions_that_keep_every_revocation(
    keys: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    signer = keys / "trt-edge-signing.key"
    listing = tmp_path / "revocations.json"
    first, second = "aa" * 32, "bb" * 32
    assert (
        cli(capsys, "keys", "revoke", first, "--key", str(signer), "--list", str(listing))[0] == 0
    )
    code, out = cli(
        capsys,
        "keys",
        "revoke",
        second,
        "--key",
        str(signer),
        "--list",
        str(listing),
        "--reason",
        "leaked in a CI log",
    )
    assert code == 0 and "version 2" in out
    parsed = RevocationList.parse(Envelope.from_json(listing.read_bytes(), "l"), "l")
    assert parsed.version == 2
    assert parsed.revoked == {first: "revoked", second: "leaked in a CI log"}
    pub = load_public_key(keys / "trt-edge-signing.pub")
    assert parsed.envelope.signed_by(key_id(pub), pub)
    bad, out = cli(capsys, "keys", "revoke", "nope", "--key", str(signer), "--list", str(listing))
    assert bad == 2 and "neither a key id" in out


def test_keys_id_prints_the_id_devices_name(keys: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = cli(capsys, "keys", "id", str(keys / "trt-edge-signing.pub"))
    assert code == 0
    assert out.split()[0] == key_id(load_public_key(keys / "trt-edge-signing.pub"))


def test_pack_writes_a_deterministic_tar_of_a_signed_bundle(
    bundle: Path, keys: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sign(bundle, keys)
    first, second = tmp_path / "a.tar", tmp_path / "out" / "b.tar"
    code, out = cli(capsys, "pack", str(bundle), "-o", str(first))
    assert code == 0 and "packed tiny 1.0.0 (signed by key" in out, out
    code, out = cli(
        capsys,
        "pack",
        str(bundle),
        "-o",
        str(second),
        "--pubkey",
        str(keys / "trt-edge-signing.pub"),
    )
    assert code == 0, out
    assert first.read_bytes() == second.read_bytes()
    with tarfile.open(first) as tar:
        names = tar.getnames()
    assert names == [
        "tiny-1.0.0",
        "tiny-1.0.0/bundle.json",
        "tiny-1.0.0/bundle.sig",
        "tiny-1.0.0/model.pte",
        "tiny-1.0.0/reports",
        "tiny-1.0.0/reports/validation.json",
    ]


def test_pack_refuses_an_unsigned_bundle_unless_told(
    bundle: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = cli(capsys, "pack", str(bundle), "-o", str(tmp_path / "x.tar"))
    assert code == 1 and "bundle.sig: missing; the bundle is unsigned" in out
    assert "--unsigned" in out and not (tmp_path / "x.tar").exists()
    code, out = cli(capsys, "pack", str(bundle), "-o", str(tmp_path / "x.tar"), "--unsigned")
    assert code == 0 and "(unsigned)" in out


def test_pack_refuses_a_damaged_bundle_and_another_key(
    bundle: Path, keys: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sign(bundle, keys)
    assert main(["keys", "generate", str(tmp_path / "other")]) == 0
    code, out = cli(
        capsys,
        "pack",
        str(bundle),
        "-o",
        str(tmp_path / "x.tar"),
        "--pubkey",
        str(tmp_path / "other" / "trt-edge-signing.pub"),
    )
    assert code == 1 and "not trusted here" in out
    (bundle / "extra.txt").write_text("smuggled")
    code, out = cli(capsys, "pack", str(bundle), "-o", str(tmp_path / "x.tar"))
    assert code == 1 and "extra.txt: extra file not listed in bundle.json" in out
    assert not (tmp_path / "x.tar").exists()
    code, out = cli(capsys, "pack", str(bundle), "-o", str(bundle / "inside.tar"))
    assert code == 2 and "inside the bundle directory" in out


def test_pack_and_sign_refuse_a_version_devices_cannot_order(
    tmp_path: Path, keys: Path, tiny_pte: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    odd = write_bundle(tmp_path / "odd", tiny_pte, version="2024.5")
    code, out = cli(capsys, "sign", str(odd), "--key", str(keys / "trt-edge-signing.key"))
    assert code == 1 and "'2024.5' is not a version a device can order" in out
    assert "nothing was signed" in out
    code, out = cli(capsys, "pack", str(odd), "-o", str(tmp_path / "x.tar"), "--unsigned")
    assert code == 1 and "'2024.5' is not a version a device can order" in out
