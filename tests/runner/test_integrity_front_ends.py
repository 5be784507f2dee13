"""One bundle-integrity rule, five front ends: a damaged bundle is refused by all, naming the file.

The bundle is the real tiny-LLM example (built by the pipeline), copied and signed,
then damaged one way after signing: (a) an extra file, (b) a symbolic link, (c) one
changed byte, (d) a listed file removed. Each of `trt-edge run`, `trt-edge verify`,
`trt-edge inspect`, `trt-edge-device install` (the signed bundle packed as a transport
tar) and the C++ `trt-edge-run` must refuse it with a message naming the damaged file —
exit 1, or for `trt-edge-run` its own code for the kind (`bundle_integrity`, 4) — the
same rule (`trt_edge_runner.bundle_integrity`, and its C++ twin held to the same
vectors) everywhere.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
from collections.abc import Callable
from pathlib import Path

import pytest
from trt_edge.cli.main import main
from trt_edge.signing import generate_keypair, sign_bundle
from trt_edge_runner.runner_interface import EXIT_BUNDLE_INTEGRITY

pytestmark = pytest.mark.slow

Damage = Callable[[Path], str]  # damages the bundle, returns the text the refusal must contain


def add_extra_file(bundle: Path) -> str:
    (bundle / "extra.txt").write_text("not signed\n", encoding="utf-8")
    return "extra.txt: extra file not listed in bundle.json"


def add_symlink(bundle: Path) -> str:
    os.symlink("/etc/passwd", bundle / "passwd")
    return "passwd: is a symbolic link"


def change_one_byte(bundle: Path) -> str:
    pte = bundle / "model.pte"
    data = bytearray(pte.read_bytes())
    data[len(data) // 2] ^= 0x01
    pte.write_bytes(bytes(data))
    return "model.pte: sha256 "


def remove_a_listed_file(bundle: Path) -> str:
    listed = json.loads((bundle / "bundle.json").read_text(encoding="utf-8"))["files"]
    victim = next((name for name in sorted(listed) if name != "model.pte"), "model.pte")
    (bundle / victim).unlink()
    return f"{victim}: listed in bundle.json but missing"


DAMAGES: dict[str, Damage] = {
    "extra file": add_extra_file,
    "symlink": add_symlink,
    "changed byte": change_one_byte,
    "missing file": remove_a_listed_file,
}


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.err


@pytest.fixture
def signed_copy(tiny_llm_bundle: Path, tmp_path: Path) -> tuple[Path, Path]:
    """(a signed private copy of the tiny-LLM bundle, the directory of its public key)."""
    pair = generate_keypair(tmp_path / "keys")
    bundle = Path(shutil.copytree(tiny_llm_bundle, tmp_path / tiny_llm_bundle.name))
    sign_bundle(bundle, pair.private_path)
    trusted = tmp_path / "trusted"
    trusted.mkdir()
    shutil.copy(pair.public_path, trusted / "publisher.pub")
    return bundle, trusted


FRONT_ENDS = [
    "trt-edge run",
    "trt-edge verify",
    "trt-edge inspect",
    "device install",
    "trt-edge-run",
]


@pytest.mark.parametrize("damage", sorted(DAMAGES))
@pytest.mark.parametrize("front_end", FRONT_ENDS)
def test_every_front_end_refuses_a_damaged_bundle_naming_the_file(
    front_end: str,
    damage: str,
    signed_copy: tuple[Path, Path],
    trt_edge_run: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    bundle, trusted = signed_copy
    # Undamaged, every front end accepts it (so a refusal below is about the damage).
    assert _cli(capsys, "verify", str(bundle), "--pubkey", str(trusted / "publisher.pub"))[0] == 0
    names = DAMAGES[damage](bundle)
    if front_end == "trt-edge run":
        code, err = _cli(capsys, "run", str(bundle), "--phase", "decode")
    elif front_end == "trt-edge verify":
        code, err = _cli(capsys, "verify", str(bundle), "--pubkey", str(trusted / "publisher.pub"))
    elif front_end == "trt-edge inspect":
        code, err = _cli(capsys, "inspect", str(bundle))
    elif front_end == "device install":
        archive = tmp_path / f"{bundle.name}.tar"
        with tarfile.open(archive, "w") as tar:
            tar.add(bundle, arcname=bundle.name)  # links stay links (no dereference)
        facts = tmp_path / "facts.json"
        facts.write_text(json.dumps({"arch": os.uname().machine}), encoding="utf-8")
        done = subprocess.run(
            [sys.executable, "-m", "trt_edge_runner.device_cli", "install", str(archive)],
            env={
                **os.environ,
                "TRT_EDGE_ROOT": str(tmp_path / "device"),
                "TRT_EDGE_KEYS": str(trusted),
                "TRT_EDGE_FACTS": str(facts),
                "TRT_EDGE_CONFIG": str(tmp_path / "device.json"),
                "TRT_EDGE_RUNNER": str(trt_edge_run),
            },
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        code, err = done.returncode, done.stderr
    else:
        done = subprocess.run(
            [str(trt_edge_run), "--bundle", str(bundle), "--phase", "decode"],
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        code, err = done.returncode, done.stderr
    assert code == (EXIT_BUNDLE_INTEGRITY if front_end == "trt-edge-run" else 1), err
    assert names in err, err
    assert "Traceback" not in err
