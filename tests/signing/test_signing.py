"""Signing and verification of bundle directories, through the real `trt-edge` CLI.

The bundle is a small real one (`tests.helpers.bundles`): the session's tiny `.pte`, a
bundle.json written by the build's bundle stage and a validation report.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from trt_edge.cli.main import main

from tests.signing.conftest import sign


def verify(bundle: Path, keys: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["verify", str(bundle), "--pubkey", str(keys / "trt-edge-signing.pub")])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def verify_refused(bundle: Path, keys: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """`trt-edge verify` refusing the bundle (exit 1): what it printed."""
    code, out = verify(bundle, keys, capsys)
    assert code == 1, out
    return out


def test_generated_private_key_is_private_and_not_overwritten(keys: Path) -> None:
    assert (keys / "trt-edge-signing.key").stat().st_mode & 0o777 == 0o600
    before = (keys / "trt-edge-signing.key").read_bytes()
    assert main(["keys", "generate", str(keys)]) == 2
    assert (keys / "trt-edge-signing.key").read_bytes() == before


def test_signed_bundle_verifies(
    bundle: Path, keys: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sign(bundle, keys)
    code, out = verify(bundle, keys, capsys)
    assert code == 0, out
    assert "tiny 1.0.0" in out and "2 files match" in out


def test_unsigned_bundle_is_refused(
    bundle: Path, keys: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = verify_refused(bundle, keys, capsys)
    assert "bundle.sig: missing; the bundle is unsigned" in out


@pytest.mark.parametrize("rel", ["model.pte", "reports/validation.json"])
def test_any_changed_byte_is_refused_naming_the_file(
    bundle: Path, keys: Path, capsys: pytest.CaptureFixture[str], rel: str
) -> None:
    sign(bundle, keys)
    path = bundle / rel
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))
    out = verify_refused(bundle, keys, capsys)
    assert f"{rel}: sha256" in out and "does not match bundle.json" in out


@pytest.mark.parametrize(
    ("edit", "refusal"),
    [
        ((b'"1.0.0"', b'"1.0.1"'), "signature does not match its content"),
        ((b",", b", "), "not in canonical form"),
    ],
    ids=["changed", "reformatted"],
)
def test_edited_bundle_json_is_refused(
    bundle: Path,
    keys: Path,
    capsys: pytest.CaptureFixture[str],
    edit: tuple[bytes, bytes],
    refusal: str,
) -> None:
    sign(bundle, keys)
    doc = (bundle / "bundle.json").read_bytes().replace(*edit, 1)
    (bundle / "bundle.json").write_bytes(doc)
    out = verify_refused(bundle, keys, capsys)
    assert refusal in out


def test_missing_and_extra_files_are_all_reported(
    bundle: Path, keys: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sign(bundle, keys)
    (bundle / "reports" / "validation.json").unlink()
    (bundle / "payload.sh").write_text("echo hi\n")
    out = verify_refused(bundle, keys, capsys)
    assert "reports/validation.json: listed in bundle.json but missing" in out
    assert "payload.sh: extra file not listed in bundle.json" in out


def test_symlink_in_bundle_is_refused(
    bundle: Path, keys: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sign(bundle, keys)
    os.symlink("/etc/passwd", bundle / "passwd")
    out = verify_refused(bundle, keys, capsys)
    assert "passwd: is a symbolic link" in out


def test_wrong_key_is_refused_as_untrusted(
    bundle: Path, keys: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sign(bundle, keys)
    assert main(["keys", "generate", str(tmp_path / "other")]) == 0
    out = verify_refused(bundle, tmp_path / "other", capsys)
    assert "which is not trusted here" in out


def test_signature_made_by_another_key_under_a_trusted_id_is_refused(
    bundle: Path, keys: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A forged bundle.sig that claims the trusted key's id still fails the ed25519 check."""
    sign(bundle, keys)
    genuine = (bundle / "bundle.sig").read_bytes()
    assert main(["keys", "generate", str(tmp_path / "other")]) == 0
    sign(bundle, tmp_path / "other")
    forged = (bundle / "bundle.sig").read_bytes()
    genuine_id = genuine.split(b'"key_id":"')[1].split(b'"')[0]
    forged_id = forged.split(b'"key_id":"')[1].split(b'"')[0]
    (bundle / "bundle.sig").write_bytes(forged.replace(forged_id, genuine_id))
    out = verify_refused(bundle, keys, capsys)
    assert "signature does not match its content" in out


def test_signing_a_damaged_bundle_is_refused(
    bundle: Path, keys: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (bundle / "model.pte").write_bytes(b"tampered")
    code = main(["sign", str(bundle), "--key", str(keys / "trt-edge-signing.key")])
    assert code == 1
    assert "hint: nothing was signed" in capsys.readouterr().err
    assert not (bundle / "bundle.sig").exists()


def test_public_key_passed_as_signing_key_is_bad_input(
    bundle: Path, keys: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["sign", str(bundle), "--key", str(keys / "trt-edge-signing.pub")])
    assert code == 2
    err = capsys.readouterr().err
    assert "trt-edge-signing.pub: not an unencrypted PEM private key" in err
