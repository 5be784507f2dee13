"""`trt-edge run BUNDLE (--phase P | --profile N | --auto)`: execute a bundle once on this host.

The same command as `trt-edge-device run` (one implementation,
`trt_edge_runner.commands.run`), so what a laptop accepts or refuses is what a
device accepts or refuses: random inputs from the bundle's I/O spec (respecting
`values`) sized by `--dims` or the profile's opt, or `--inputs FILE.npz`;
prints each output's name, shape and dtype, the profile used and the latency.
On the host it runs in ExecuTorch's Python runtime unless `--engine cpp` asks
for the C++ runner (the device's default).
"""

from __future__ import annotations

from trt_edge_runner.commands.run import make_command

COMMAND = make_command("python")

__all__ = ["COMMAND"]
