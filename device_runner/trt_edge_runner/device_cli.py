"""Entry point of `trt-edge-device`, the on-device command line.

Each sub-command is a module in `trt_edge_runner.commands` defining `COMMAND`;
discovery, dispatch, error rendering and exit codes are the shared shell's
(`trt_edge_runner.cli_shell`), the same one `trt-edge` uses.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

import trt_edge_runner.commands as commands_package
from trt_edge_runner import __version__
from trt_edge_runner.cli_shell import Shell

SHELL = Shell(
    "trt-edge-device",
    commands_package,
    description="Run, install and health-check trt-edge bundles on this device.",
    version=__version__,
    # Order shown in `trt-edge-device --help`; others follow alphabetically.
    help_order=("info", "run", "generate", "install", "status", "health", "rollback", "trust"),
)


def main(argv: Sequence[str] | None = None) -> int:
    return SHELL.main(argv)


if __name__ == "__main__":
    sys.exit(main())
