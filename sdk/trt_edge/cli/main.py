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
import sys
from collections.abc import Sequence

from trt_edge import __version__

# Order is the order shown in `trt-edge --help`. A module listed here that does
# not exist yet is a bug, not an optional feature: the import error surfaces.
COMMAND_MODULES: tuple[str, ...] = (
    "trt_edge.cli.validate",
    "trt_edge.cli.profiles",
)


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
    for module_name in COMMAND_MODULES:
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
    return code


if __name__ == "__main__":
    sys.exit(main())
