"""`trt-edge flash` staging into a temporary L4T BSP tree (the flash itself needs hardware)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from trt_edge.cli.main import main
from trt_edge.flash.boards import board_target, boards, flash_command
from trt_edge.flash.errors import FlashError

from tests.helpers.fixtures_bundles import Bundles


@pytest.fixture
def bsp(tmp_path: Path) -> Path:
    root = tmp_path / "Linux_for_Tegra"
    (root / "rootfs" / "etc").mkdir(parents=True)
    return root


def flash(bsp: Path, bundle: Path, pubkey: Path, *extra: str, board: str = "") -> int:
    return main(
        [
            "flash",
            "--board",
            board or "jetson-orin-nano-jp6",
            "--bsp",
            str(bsp),
            "--bundle",
            str(bundle),
            "--pubkey",
            str(pubkey),
            *extra,
        ]
    )


def test_dry_run_stages_runner_bundle_keys_and_service(
    bsp: Path, agent_bundles: Bundles, capsys: pytest.CaptureFixture[str]
) -> None:
    pub = agent_bundles.keys / "publisher.pub"
    assert flash(bsp, agent_bundles.orin, pub, "--dry-run") == 0
    out = capsys.readouterr().out
    rootfs = bsp / "rootfs"
    state = json.loads((rootfs / "var/lib/trt-edge/state.json").read_text())
    assert state["active"] == "A" and state["slots"]["A"]["version"] == "1.0.0-orin"
    assert os.readlink(rootfs / "var/lib/trt-edge/current") == "slots/A"
    assert (rootfs / "var/lib/trt-edge/slots/A/model.pte").is_file()
    assert (rootfs / "etc/trt-edge/keys/publisher.pub").read_bytes() == pub.read_bytes()
    unit = rootfs / "etc/systemd/system/trt-edge-agent.service"
    assert "ExecStart=/usr/local/bin/trt-edge-device status" in unit.read_text()
    wants = rootfs / "etc/systemd/system/multi-user.target.wants/trt-edge-agent.service"
    assert os.readlink(wants) == "../trt-edge-agent.service"
    assert os.access(rootfs / "usr/local/bin/trt-edge-device", os.X_OK)
    assert "l4t_initrd_flash.sh" in out and "jetson-orin-nano-devkit internal" in out

    # The staged runner copy works on its own: it reads the staged state.
    staged = rootfs / "opt/trt-edge/runner"
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, trt_edge_runner, trt_edge_runner.device_cli as c;"
            "print(trt_edge_runner.__file__, file=sys.stderr);"
            f"sys.exit(c.main(['status', '--json', '--root', '{rootfs / 'var/lib/trt-edge'}']))",
        ],
        env={**os.environ, "PYTHONPATH": str(staged)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert str(staged) in result.stderr
    assert json.loads(result.stdout)["version"] == "1.0.0-orin"


def test_bundle_for_another_target_is_not_staged(
    bsp: Path, agent_bundles: Bundles, capsys: pytest.CaptureFixture[str]
) -> None:
    assert flash(bsp, agent_bundles.v1, agent_bundles.keys / "publisher.pub", "--dry-run") == 1
    err = capsys.readouterr().err
    assert "arch: bundle needs x86_64, device is aarch64" in err
    assert not (bsp / "rootfs/var/lib/trt-edge/state.json").exists()


def test_untrusted_bundle_is_not_staged(
    bsp: Path, agent_bundles: Bundles, capsys: pytest.CaptureFixture[str]
) -> None:
    pub = agent_bundles.keys / "publisher.pub"
    assert flash(bsp, agent_bundles.other_key, pub, "--dry-run") == 1
    assert "not trusted here" in capsys.readouterr().err


def test_bad_board_and_missing_rootfs_are_bad_input(
    tmp_path: Path, agent_bundles: Bundles, capsys: pytest.CaptureFixture[str]
) -> None:
    pub = agent_bundles.keys / "publisher.pub"
    assert flash(tmp_path, agent_bundles.orin, pub, "--dry-run", board="jetson-tx1") == 2
    err = capsys.readouterr().err
    assert "--board jetson-tx1: not a flashable board" in err and "jetson-orin-nano-devkit" in err
    assert flash(tmp_path, agent_bundles.orin, pub, "--dry-run") == 2
    assert "not an L4T BSP (no rootfs/)" in capsys.readouterr().err


def test_real_flash_without_nvidia_tool_says_the_bsp_is_incomplete(
    bsp: Path, agent_bundles: Bundles, capsys: pytest.CaptureFixture[str]
) -> None:
    assert flash(bsp, agent_bundles.orin, agent_bundles.keys / "publisher.pub") == 2
    assert "NVIDIA's flash tool is missing" in capsys.readouterr().err


def test_every_catalog_board_has_a_flash_command() -> None:
    known = boards()
    assert "jetson-orin-nano-devkit" in known
    for targets in known.values():
        for target in targets:
            command = flash_command(target)
            assert command[0] == "sudo" and target.flash_board in command


def test_target_ids_resolve_and_a_shared_board_name_is_refused() -> None:
    assert board_target("jetson-orin-nano-jp6").id == "jetson-orin-nano-jp6"
    assert board_target("jetson-orin-nx-jp6").id == "jetson-orin-nx-jp6"
    assert board_target("jetson-agx-orin-devkit").id == "jetson-agx-orin-jp6"
    with pytest.raises(FlashError) as caught:
        board_target("jetson-orin-nano-devkit")
    message = str(caught.value)
    assert "jetson-orin-nano-jp6" in message and "jetson-orin-nx-jp6" in message


def test_refused_bundle_leaves_a_fresh_rootfs_untouched(
    bsp: Path, agent_bundles: Bundles, capsys: pytest.CaptureFixture[str]
) -> None:
    pub = agent_bundles.keys / "publisher.pub"
    assert flash(bsp, agent_bundles.other_key, pub, "--dry-run") == 1
    assert "not trusted here" in capsys.readouterr().err
    rootfs = bsp / "rootfs"
    left = {p.relative_to(rootfs).as_posix() for p in rootfs.rglob("*")}
    assert left <= {"etc", "var", "var/lib"}, left  # keys, runner, launcher never written


def test_failed_restage_keeps_the_previous_staging(
    bsp: Path, agent_bundles: Bundles, capsys: pytest.CaptureFixture[str]
) -> None:
    pub = agent_bundles.keys / "publisher.pub"
    assert flash(bsp, agent_bundles.orin, pub, "--dry-run") == 0
    store = bsp / "rootfs/var/lib/trt-edge"
    state_before = (store / "state.json").read_bytes()
    model_before = (store / "slots/A/model.pte").read_bytes()
    capsys.readouterr()
    assert flash(bsp, agent_bundles.v1, pub, "--dry-run") == 1  # x86 bundle: refused
    assert "arch: bundle needs x86_64" in capsys.readouterr().err
    assert (store / "state.json").read_bytes() == state_before
    assert (store / "slots/A/model.pte").read_bytes() == model_before
    assert os.readlink(store / "current") == "slots/A"
    assert [p.name for p in store.parent.iterdir()] == ["trt-edge"]  # no scratch left
    # Re-staging a good bundle still replaces slot A.
    assert flash(bsp, agent_bundles.orin, pub, "--dry-run") == 0
    assert json.loads((store / "state.json").read_text())["active"] == "A"


def test_bundle_directory_errors_name_the_directory_and_leave_no_temp(
    bsp: Path,
    agent_bundles: Bundles,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    import tempfile

    scratch_root = tmp_path / "tmpdir"
    scratch_root.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch_root))
    bundle_dir = agent_bundles.v1.with_suffix("")  # the directory the tar was packed from
    assert (bundle_dir / "bundle.json").is_file()
    pub = agent_bundles.keys / "publisher.pub"
    assert flash(bsp, bundle_dir, pub, "--dry-run") == 1
    err = capsys.readouterr().err
    assert f"{bundle_dir}: built for target" in err and str(scratch_root) not in err
    assert list(scratch_root.iterdir()) == []
    orin_dir = agent_bundles.orin.with_suffix("")
    assert flash(bsp, orin_dir, pub, "--dry-run") == 0
    assert list(scratch_root.iterdir()) == []
    not_a_bundle = tmp_path / "empty"
    not_a_bundle.mkdir()
    assert flash(bsp, not_a_bundle, pub, "--dry-run") == 2
    assert f"{not_a_bundle}: not a bundle" in capsys.readouterr().err
