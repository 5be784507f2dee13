"""Entry point of `trt-edge-device`, the on-device command line.

Same convention as the host CLI: each sub-command is a module in
`trt_edge_runner.commands` exposing
`register(subparsers)` (which calls `parser.set_defaults(run=run)`) and
`run(args) -> int` (0 ok, 1 failed, 2 bad input). Modules import nothing heavy
at module level.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from collections.abc import Sequence

import trt_edge_runner.commands as commands_package
from trt_edge_runner import __version__

# Order shown in `trt-edge-device --help`; others follow alphabetically.
HELP_ORDER: tuple[str, ...] = ("info", "run", "install", "status", "health", "rollback")


def command_modules() -> list[str]:
    """Every public module in `trt_edge_runner.commands` is a sub-command."""
    names = [
        info.name
        for info in pkgutil.iter_modules(commands_package.__path__)
        if not info.name.startswith("_")
    ]
    rank = {name: i for i, name in enumerate(HELP_ORDER)}
    names.sort(key=lambda n: (rank.get(n, len(rank)), n))
    return [f"trt_edge_runner.commands.{n}" for n in names]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="trt-edge-device",
        description="Run, install and health-check trt-edge bundles on this device.",
    )
    parser.add_argument("--version", action="version", version=f"trt-edge-device {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module_name in command_modules():
        importlib.import_module(module_name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        code: int = args.run(args)
    except KeyboardInterrupt:
        print("trt-edge-device: interrupted", file=sys.stderr)
        return 130
    except OSError as exc:
        # Last resort: commands turn expected I/O problems into their own messages;
        # anything that slips through still names the file instead of a traceback.
        if isinstance(exc, BrokenPipeError):
            import os

            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 0
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"trt-edge-device: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return 2
    return code


if __name__ == "__main__":
    sys.exit(main())
