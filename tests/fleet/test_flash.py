"""`trt-edge flash` staging into a temporary L4T BSP tree (the flash itself needs hardware).

The runner staged is the real aarch64 runner tarball (`make device-aarch64`); the staged
tree is then run as the device would run it: the staged agent, executing the staged
bundle in the staged aarch64 trt-edge-run (under qemu-user here)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Protocol

import pytest
from trt_edge.cli.main import main
from trt_edge.flash.boards import board_target, boards, flash_command
from trt_edge.flash.errors import FlashError
from trt_edge_runner.agent.runner_process import elf_arch

from tests.helpers.fixtures_bundles import Bundles


@pytest.fixture
def bsp(tmp_path: Path) -> Path:
    root = tmp_path / "Linux_for_Tegra"
    (root / "rootfs" / "etc").mkdir(parents=True)
    return root


class Flash(Protocol):
    def __call__(
        self, bsp: Path, bundle: Path, pubkey: Path, *extra: str, board: str = "",
        tarball: Path | None = None,
    ) -> int: ...  # fmt: skip


@pytest.fixture
def flash(aarch64_tarball: Path) -> Flash:
    """`trt-edge flash` in this process, staging the real aarch64 runner tarball unless told."""

    def run(
        bsp: Path, bundle: Path, pubkey: Path, *extra: str, board: str = "",
        tarball: Path | None = None,
    ) -> int:  # fmt: skip
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
                "--runner-tarball",
                str(tarball or aarch64_tarball),
                *extra,
            ]
        )

    return run


def test_dry_run_stages_runner_bundle_keys_and_service(
    flash: Flash, bsp: Path, agent_bundles: Bundles, capsys: pytest.CaptureFixture[str]
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
    serve_unit = rootfs / "etc/systemd/system/trt-edge-serve.service"
    assert "ExecStart=/usr/local/bin/trt-edge-device serve\n" in serve_unit.read_text()
    serve_wants = rootfs / "etc/systemd/system/multi-user.target.wants/trt-edge-serve.service"
    assert os.readlink(serve_wants) == "../trt-edge-serve.service"
    assert os.access(rootfs / "usr/local/bin/trt-edge-device", os.X_OK)
    follow_unit = rootfs / "etc/systemd/system/trt-edge-follow.service"
    assert "trt-edge-device follow $TRT_EDGE_FOLLOW" in follow_unit.read_text()
    assert not (
        rootfs / "etc/systemd/system/multi-user.target.wants/trt-edge-follow.service"
    ).exists()
    assert not (rootfs / "etc/trt-edge/follow.env").exists()
    assert "l4t_initrd_flash.sh" in out and "jetson-orin-nano-devkit internal" in out

    # The staged agent copy works on its own: it reads the staged state.
    staged = rootfs / "opt/trt-edge/agent"
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


def test_the_aarch64_runner_is_staged_and_runs_the_staged_bundle(
    flash: Flash, bsp: Path, agent_bundles: Bundles, arm64_openssl_libdir: str, tmp_path: Path
) -> None:
    pub = agent_bundles.keys / "publisher.pub"
    assert flash(bsp, agent_bundles.orin, pub, "--dry-run") == 0
    rootfs = bsp / "rootfs"
    runner = rootfs / "opt/trt-edge/runner/bin/trt-edge-run"
    info = json.loads((rootfs / "opt/trt-edge/runner/runner.json").read_text())
    assert info["arch"] == "aarch64" and os.access(runner, os.X_OK)
    assert elf_arch(runner) == "aarch64"
    assert (rootfs / "opt/trt-edge/runner/lib/libexecutorch.so").is_file()
    link = os.readlink(rootfs / "usr/local/bin/trt-edge-run")
    assert link == "/opt/trt-edge/runner/bin/trt-edge-run"
    launcher = (rootfs / "usr/local/bin/trt-edge-device").read_text()
    assert "TRT_EDGE_RUNNER=${TRT_EDGE_RUNNER:-/opt/trt-edge/runner/bin/trt-edge-run}" in launcher
    assert "PYTHONPATH=/opt/trt-edge/agent" in launcher
    # The device's first health check, as the unit runs it: the staged agent (pure Python)
    # drives the staged aarch64 runner (qemu-user stands in for the Jetson's CPU).
    qemu_runner = tmp_path / "trt-edge-run"
    qemu_runner.write_text(
        "#!/bin/sh\n"
        f"LD_LIBRARY_PATH={arm64_openssl_libdir} exec qemu-aarch64-static "
        f'-L /usr/aarch64-linux-gnu {runner} "$@"\n'
    )
    qemu_runner.chmod(0o755)
    facts = tmp_path / "facts.json"
    facts.write_text(json.dumps({"arch": "aarch64"}))
    health = subprocess.run(
        [sys.executable, "-m", "trt_edge_runner.device_cli", "health", "--json",
         "--root", str(rootfs / "var/lib/trt-edge"), "--runner", str(qemu_runner),
         "--config", str(tmp_path / "device.json")],
        env={**os.environ, "PYTHONPATH": str(rootfs / "opt/trt-edge/agent")},
        capture_output=True, text=True, check=False, timeout=600,
    )  # fmt: skip
    assert health.returncode == 0, health.stderr
    report = json.loads(health.stdout)
    assert report["ok"] and report["version"] == "1.0.0-orin" and report["engine"] == "cpp"
    assert [p["phase"] for p in report["phases"]] == ["decode", "prefill"]


def test_a_runner_tarball_for_another_arch_or_none_is_refused_before_staging(
    flash: Flash,
    bsp: Path, agent_bundles: Bundles, x86_64_tarball: Path, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    pub = agent_bundles.keys / "publisher.pub"
    assert flash(bsp, agent_bundles.orin, pub, "--dry-run", tarball=x86_64_tarball) == 2
    assert "built for x86_64, the target runs aarch64" in capsys.readouterr().err
    missing = tmp_path / "no-such.tar.gz"
    assert flash(bsp, agent_bundles.orin, pub, "--dry-run", tarball=missing) == 2
    err = capsys.readouterr().err
    assert f"--runner-tarball {missing}: no such file" in err and "make device-aarch64" in err
    rootfs = bsp / "rootfs"
    assert {p.relative_to(rootfs).as_posix() for p in rootfs.rglob("*")} == {"etc"}


def test_bundle_for_another_target_is_not_staged(
    flash: Flash, bsp: Path, agent_bundles: Bundles, capsys: pytest.CaptureFixture[str]
) -> None:
    assert flash(bsp, agent_bundles.v1, agent_bundles.keys / "publisher.pub", "--dry-run") == 1
    err = capsys.readouterr().err
    assert "arch: bundle needs x86_64, device is aarch64" in err
    assert not (bsp / "rootfs/var/lib/trt-edge/state.json").exists()


def test_untrusted_bundle_is_not_staged(
    flash: Flash, bsp: Path, agent_bundles: Bundles, capsys: pytest.CaptureFixture[str]
) -> None:
    pub = agent_bundles.keys / "publisher.pub"
    assert flash(bsp, agent_bundles.other_key, pub, "--dry-run") == 1
    assert "not trusted here" in capsys.readouterr().err


def test_bad_board_and_missing_rootfs_are_bad_input(
    flash: Flash, tmp_path: Path, agent_bundles: Bundles, capsys: pytest.CaptureFixture[str]
) -> None:
    pub = agent_bundles.keys / "publisher.pub"
    assert flash(tmp_path, agent_bundles.orin, pub, "--dry-run", board="jetson-tx1") == 2
    err = capsys.readouterr().err
    assert "--board jetson-tx1: not a flashable board" in err and "jetson-orin-nano-devkit" in err
    assert flash(tmp_path, agent_bundles.orin, pub, "--dry-run") == 2
    assert "not an L4T BSP (no rootfs/)" in capsys.readouterr().err


def test_real_flash_without_nvidia_tool_says_the_bsp_is_incomplete(
    flash: Flash, bsp: Path, agent_bundles: Bundles, capsys: pytest.CaptureFixture[str]
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
    flash: Flash, bsp: Path, agent_bundles: Bundles, capsys: pytest.CaptureFixture[str]
) -> None:
    pub = agent_bundles.keys / "publisher.pub"
    assert flash(bsp, agent_bundles.other_key, pub, "--dry-run") == 1
    assert "not trusted here" in capsys.readouterr().err
    rootfs = bsp / "rootfs"
    left = {p.relative_to(rootfs).as_posix() for p in rootfs.rglob("*")}
    assert left <= {"etc", "var", "var/lib"}, left  # keys, runner, launcher never written


def test_failed_restage_keeps_the_previous_staging(
    flash: Flash, bsp: Path, agent_bundles: Bundles, capsys: pytest.CaptureFixture[str]
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
    flash: Flash,
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


def test_follow_enables_the_follower_unit_on_that_channel(
    flash: Flash, bsp: Path, agent_bundles: Bundles
) -> None:
    pub = agent_bundles.keys / "publisher.pub"
    ref = "registry.example:5000/fleet/tiny:stable"
    assert flash(bsp, agent_bundles.orin, pub, "--dry-run", "--follow", ref) == 0
    rootfs = bsp / "rootfs"
    link = rootfs / "etc/systemd/system/multi-user.target.wants/trt-edge-follow.service"
    assert os.readlink(link) == "../trt-edge-follow.service"
    assert f"TRT_EDGE_FOLLOW={ref}\n" in (rootfs / "etc/trt-edge/follow.env").read_text()


def test_a_malformed_follow_reference_is_bad_input_before_staging(
    flash: Flash, bsp: Path, agent_bundles: Bundles, capsys: pytest.CaptureFixture[str]
) -> None:
    pub = agent_bundles.keys / "publisher.pub"
    assert flash(bsp, agent_bundles.orin, pub, "--dry-run", "--follow", "no-tag/here") == 2
    assert "REGISTRY/REPO:CHANNEL" in capsys.readouterr().err
    assert not (bsp / "rootfs/var/lib/trt-edge").exists()
