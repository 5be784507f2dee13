"""Flashing Jetsons: stage the runner, a signed bundle (slot A), trusted keys and a systemd
unit into an L4T BSP's `rootfs/`, then print or run NVIDIA's flash command for the board.

`boards` maps catalog board names to targets and NVIDIA's flash command lines;
`stage` writes into the rootfs. The flash itself needs the hardware (a Jetson in
recovery mode on USB), root, and NVIDIA's BSP with `apply_binaries.sh` already run.
"""
