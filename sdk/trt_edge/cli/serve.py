"""`trt-edge serve BUNDLE [BUNDLE ...] [--host H] [--port P] [--runner PATH]`: serve as a
device would.

The device's own service (`trt-edge-device serve`), on this host: the C++ engine
`trt-edge-run --serve` on each BUNDLE (several: each by its model name, loaded on demand
within `--memory-budget-mib`) behind the OpenAI-compatible API, KServe v2 and
`/metrics`, so an application can be pointed at it before the bundle ships. The runner is
`--runner`, `$TRT_EDGE_RUNNER` or `trt-edge-run` on PATH (`make test-cpp` builds one under
device_runner/cpp/build/runner/). Needs the `serve` extra of trt-edge-runner.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from trt_edge_runner.agent.config import DEFAULT_ROOT, add_config_argument
from trt_edge_runner.cli_shell import Command
from trt_edge_runner.commands.serve import add_serve_arguments, serve_from_arguments


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "bundle",
        metavar="BUNDLE",
        type=Path,
        nargs="+",
        help="bundle directory to serve; several serve several models, each by its name",
    )
    add_serve_arguments(parser)
    add_config_argument(parser)


def run(args: argparse.Namespace) -> int:
    return serve_from_arguments(args, args.bundle, DEFAULT_ROOT)


COMMAND = Command(
    "serve bundles on this host as a device would (OpenAI API, KServe v2, /metrics)",
    add_arguments=add_arguments,
    run=run,
)
