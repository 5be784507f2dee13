"""`trt-edge run BUNDLE (--phase P | --profile N | --auto)`: execute a bundle once on this host.

The same command as `trt-edge-device run` (one implementation, in
`trt_edge_runner.commands.run`), so what a laptop accepts or refuses is what a
device accepts or refuses: random inputs from the bundle's I/O spec (respecting
`values`) sized by `--dims` or the profile's opt, or `--inputs FILE.npz`;
prints each output's name, shape and dtype, the profile used and the latency.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import trt_edge_runner.commands.run as device_run

if TYPE_CHECKING:
    import argparse


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "run",
        help="execute a bundle once under a phase, a pinned profile or auto",
        description="Execute a bundle once with the ExecuTorch runtime, applying its profile "
        "policy (emulated on CPU backends). Inputs are random from the I/O spec unless "
        "--inputs is given.",
    )
    device_run.add_arguments(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    return device_run.execute(args, prog="trt-edge")
