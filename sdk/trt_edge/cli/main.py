"""Entry point of `trt-edge`.

Every sub-command is a module under `trt_edge.cli` defining `COMMAND`
(`trt_edge_runner.cli_shell.Command`): its help, `add_arguments(parser)` and
`run(args) -> int`. Discovery, lazy import of only the named command, error
rendering and exit codes are the shared shell's, the same one
`trt-edge-device` uses. Command modules import nothing heavy at module level,
so building the parser for `--help` stays instant; heavy work is imported
inside `run`.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from trt_edge_runner.cli_shell import Shell

import trt_edge.cli as cli_package
from trt_edge import __version__

SHELL = Shell(
    "trt-edge",
    cli_package,
    description=(
        "Build, validate, inspect, sign and roll out ExecuTorch models with "
        "TensorRT optimization profiles for edge devices."
    ),
    version=__version__,
    # Order shown in `trt-edge --help`; commands not named here follow alphabetically.
    help_order=(
        "validate",
        "profiles",
        "build",
        "lock",
        "run",
        "generate",
        "bench",
        "inspect",
        "diff",
        "images",
        "keys",
        "sign",
        "verify",
        "pack",
        "rollout",
        "flash",
    ),
)


def main(argv: Sequence[str] | None = None) -> int:
    return SHELL.main(argv)


if __name__ == "__main__":
    sys.exit(main())
