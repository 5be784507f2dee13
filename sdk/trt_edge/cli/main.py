"""Entry point of `trt-edge`.

Every sub-command lives in its own module under `trt_edge.cli` and exposes two
functions: `register(subparsers)` adds its parser, `run(args) -> int` does the
work and returns the exit code (0 ok, 1 the job failed, 2 bad input or usage).
Command modules import nothing heavy at module level, so building the parser
for `--help` stays instant; the heavy work is imported inside `run`.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from collections.abc import Sequence

import trt_edge.cli as cli_package
from trt_edge import __version__

# Order shown in `trt-edge --help`; commands not named here follow alphabetically.
HELP_ORDER: tuple[str, ...] = (
    "validate",
    "profiles",
    "build",
    "run",
    "generate",
    "bench",
    "inspect",
    "diff",
    "images",
    "keys",
    "sign",
    "verify",
    "rollout",
    "flash",
)


def command_modules() -> list[str]:
    """Every module in `trt_edge.cli` except this one is a sub-command.

    Discovery instead of a hand-kept list: adding a command is adding one file.
    """
    names = [
        info.name
        for info in pkgutil.iter_modules(cli_package.__path__)
        if info.name not in {"main"} and not info.name.startswith("_")
    ]
    rank = {name: i for i, name in enumerate(HELP_ORDER)}
    names.sort(key=lambda n: (rank.get(n, len(rank)), n))
    return [f"trt_edge.cli.{n}" for n in names]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="trt-edge",
        description=(
            "Build, validate, inspect, sign and roll out ExecuTorch models with "
            "TensorRT optimization profiles for edge devices."
        ),
    )
    parser.add_argument("--version", action="version", version=f"trt-edge {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module_name in command_modules():
        module = importlib.import_module(module_name)
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    run = args.run
    try:
        code: int = run(args)
    except KeyboardInterrupt:
        print("trt-edge: interrupted", file=sys.stderr)
        return 130
    except OSError as exc:
        # Last resort: commands turn expected I/O problems into their own messages;
        # anything that slips through still names the file instead of a traceback.
        if isinstance(exc, BrokenPipeError):
            import os

            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 0
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"trt-edge: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return 2
    return code


if __name__ == "__main__":
    sys.exit(main())
