"""`trt-edge flash --board BOARD --bsp DIR --bundle B [--dry-run]`: stage and flash a Jetson.

Stage the C++ runner (the aarch64 runner tarball), the device agent, BUNDLE
(installed into slot A after its signature and target are checked), the trusted
keys and the systemd units into BSP/rootfs (the follower's is enabled only with
--follow REGISTRY/REPO:CHANNEL), then run NVIDIA's flash command for BOARD (with
--dry-run: print it). The rootfs needs python3 and cryptography only.
Flashing needs the Jetson in recovery mode on USB, root, and the BSP prepared
with apply_binaries.sh.
"""

from __future__ import annotations

import argparse
import shlex
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from trt_edge_runner.cli_shell import Command
from trt_edge_runner.errors import Where
from trt_edge_runner.follow.reference import Reference, parse_reference

from trt_edge.containers.runner_tarball import tarball_path
from trt_edge.flash.boards import board_target, flash_command
from trt_edge.flash.errors import FlashError, FlashRefusedError
from trt_edge.flash.stage import stage_rootfs
from trt_edge.pipeline.bundle_tar import write_bundle_tar


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--board",
        required=True,
        help=(
            "target id from the catalog (e.g. jetson-orin-nano-jp6), or a board name "
            "that only one target uses"
        ),
    )
    parser.add_argument("--bsp", required=True, type=Path, help="Linux_for_Tegra directory")
    parser.add_argument(
        "--bundle", required=True, type=Path, help="signed bundle .tar (or bundle directory)"
    )
    parser.add_argument(
        "--pubkey", action="append", type=Path, default=[], help="trusted key (repeatable)"
    )
    parser.add_argument(
        "--runner-tarball",
        type=Path,
        default=None,
        help="the C++ runner tarball for the board's arch (default: "
        "dist/trt-edge-runner-<version>-linux-<arch>.tar.gz, from make device-aarch64)",
    )
    parser.add_argument(
        "--follow",
        metavar="REGISTRY/REPO:CHANNEL",
        default=None,
        help="enable the follower's unit on this registry channel (default: staged, disabled)",
    )
    parser.add_argument("--dry-run", action="store_true", help="stage, print the flash command")


def run(args: argparse.Namespace) -> int:
    target = board_target(args.board)
    command = flash_command(target)
    runner = args.runner_tarball or tarball_path(target.arch, Path())
    follow = parse_reference(args.follow, "REGISTRY/REPO:CHANNEL") if args.follow else None
    if args.bundle.is_dir():
        result = _stage_directory(args.bsp, target, args.bundle, args.pubkey, runner, follow)
    else:
        result = stage_rootfs(args.bsp, target, args.bundle, args.pubkey, runner, follow=follow)
    print(f"staged {result.name} {result.version} for {target.id} into {result.rootfs}:")
    for item in result.written:
        print(f"  {item}")
    line = shlex.join(command)
    if args.dry_run:
        print(f"flash command (run in {args.bsp} with the Jetson in recovery mode):\n  {line}")
        return 0
    tool = args.bsp / (target.flash_tool or "")
    if not tool.exists():
        raise FlashError(
            "NVIDIA's flash tool is missing; this BSP is incomplete",
            where=Where(tool),
            hint="download Jetson Linux for the board and run apply_binaries.sh",
        )
    print(f"running: {line}", flush=True)
    if subprocess.run(command, cwd=args.bsp, check=False).returncode != 0:
        raise FlashRefusedError(
            f"NVIDIA's flash command failed: {line}", hint="its own output is above"
        )
    return 0


def _stage_directory(
    bsp: Path,
    target: Any,
    bundle_dir: Path,
    pubkeys: list[Path],
    runner: Path,
    follow: Reference | None,
) -> Any:
    """Tar a bundle directory into a scratch dir (removed afterwards) and stage that tar.

    Errors are about the user's directory, not the scratch tar: its path is
    replaced by `bundle_dir` in every message.
    """
    with tempfile.TemporaryDirectory(prefix="trt-edge-flash-") as scratch:
        tar_path = Path(scratch) / f"{bundle_dir.name}.tar"
        try:
            write_bundle_tar(bundle_dir, tar_path)
            return stage_rootfs(bsp, target, tar_path, pubkeys, runner, follow=follow)
        except OSError as exc:  # not a bundle directory, or unreadable
            message = str(exc).replace(str(tar_path), str(bundle_dir))
            raise FlashError(f"--bundle: {message}") from None
        except FlashError as exc:
            message = str(exc).replace(str(tar_path), str(bundle_dir))
            raise type(exc)(message, hint=exc.hint) from None


COMMAND = Command(
    "stage runner, agent, bundle, keys and service into an L4T BSP rootfs and flash a Jetson",
    add_arguments=add_arguments,
    run=run,
)
