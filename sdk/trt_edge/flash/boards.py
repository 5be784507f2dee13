"""Board names (from the target catalog's `flash_board`) and NVIDIA's command to flash them.

Command lines follow the Jetson Linux developer guide's quick start: devkits that
boot from NVMe/USB (Orin Nano, Orin NX) are flashed with
`tools/kernel_flash/l4t_initrd_flash.sh` (QSPI bootloader + external rootfs);
devkits with eMMC (AGX Orin) with `flash.sh BOARD internal`.
"""

from __future__ import annotations

from pathlib import Path

from trt_edge.flash.errors import FlashError
from trt_edge.targets import Target, load_catalog

INITRD_FLASH = "tools/kernel_flash/l4t_initrd_flash.sh"
FLASH_SH = "flash.sh"


def flashable_targets() -> list[Target]:
    """Every catalog target that names a board and a flash tool."""
    return [t for t in load_catalog() if t.flash_board and t.flash_tool]


def boards() -> dict[str, list[Target]]:
    """Every flashable board name with the targets that run on it.

    One devkit can carry several targets (the Orin Nano devkit takes an Orin Nano
    or an Orin NX module), so a board name alone does not always pick a target.
    """
    known: dict[str, list[Target]] = {}
    for target in flashable_targets():
        known.setdefault(target.flash_board or "", []).append(target)
    return known


def board_target(board: str) -> Target:
    """The target for `board`: a target id, or a board name that only one target uses.

    FlashError (exit 2) for an unknown name, and for a board name shared by several
    targets, listing the target ids to pass instead.
    """
    targets = flashable_targets()
    for target in targets:
        if target.id == board:
            return target
    on_board = boards().get(board, [])
    if len(on_board) == 1:
        return on_board[0]
    if on_board:
        ids = ", ".join(sorted(t.id for t in on_board))
        raise FlashError(
            f"--board {board}: this board runs several targets ({ids}); "
            "pass the target id of the module fitted instead"
        )
    ids = ", ".join(sorted(t.id for t in targets))
    names = ", ".join(sorted(boards()))
    raise FlashError(
        f"--board {board}: not a flashable board in the target catalog "
        f"(target ids: {ids}; boards: {names})"
    )


def flash_command(target: Target) -> list[str]:
    """The command to run inside `Linux_for_Tegra/` with the device in recovery mode."""
    board = target.flash_board or ""
    tool = target.flash_tool or ""
    if Path(tool).name == Path(INITRD_FLASH).name:
        return [
            "sudo",
            f"./{INITRD_FLASH}",
            "--external-device",
            "nvme0n1p1",
            "-c",
            "tools/kernel_flash/flash_l4t_t234_nvme.xml",
            "-p",
            "-c bootloader/generic/cfg/flash_t234_qspi.xml",
            "--showlogs",
            "--network",
            "usb0",
            board,
            "internal",
        ]
    if Path(tool).name == FLASH_SH:
        return ["sudo", f"./{FLASH_SH}", board, "internal"]
    raise FlashError(f"{target.id}: flash tool {tool!r} is not one trt-edge knows how to call")
