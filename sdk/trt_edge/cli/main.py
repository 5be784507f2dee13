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
import os
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


def command_names() -> list[str]:
    """Every module in `trt_edge.cli` except this one is a sub-command.

    Discovery instead of a hand-kept list: adding a command is adding one file.
    A directory listing, not `pkgutil`, because this runs on every start-up.
    """
    names = {
        entry[:-3]
        for path in cli_package.__path__
        for entry in os.listdir(path)
        if entry.endswith(".py") and entry != "main.py" and not entry.startswith("_")
    }
    rank = {name: i for i, name in enumerate(HELP_ORDER)}
    return sorted(names, key=lambda n: (rank.get(n, len(rank)), n))


def command_modules() -> list[str]:
    return [f"trt_edge.cli.{n}" for n in command_names()]


def chosen_command(argv: Sequence[str]) -> str | None:
    """The sub-command named on the command line, if it is a known one.

    Only that command's module is imported then, so `trt-edge validate` does not pay
    for importing every other command; `--help`, no command or a typo import all of
    them, so the full list and argparse's own error message appear.
    """
    for arg in argv:
        if arg.startswith("-"):
            if arg in {"-h", "--help", "--version"}:
                return None
            continue
        return arg if arg in command_names() else None
    return None


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="trt-edge",
        description=(
            "Build, validate, inspect, sign and roll out ExecuTorch models with "
            "TensorRT optimization profiles for edge devices."
        ),
    )
    parser.add_argument("--version", action="version", version=f"trt-edge {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in [only] if only is not None else command_names():
        module = importlib.import_module(f"trt_edge.cli.{name}")
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(only=chosen_command(arguments))
    args = parser.parse_args(arguments)
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
