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


def boards() -> dict[str, Target]:
    """Every flashable board name in the catalog, with the target it runs."""
    return {t.flash_board: t for t in load_catalog() if t.flash_board and t.flash_tool}


def board_target(board: str) -> Target:
    """The target for `board` (a board name or a target id), or FlashError listing the boards."""
    known = boards()
    if board in known:
        return known[board]
    by_id = {t.id: t for t in known.values()}
    if board in by_id:
        return by_id[board]
    names = ", ".join(sorted(known))
    raise FlashError(f"--board {board}: not a flashable board in the target catalog ({names})")


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
