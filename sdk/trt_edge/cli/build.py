"""`trt-edge build MANIFEST`: a manifest through the build's stages to a validated bundle.

Build a validated bundle from a manifest: torch.export over the profiles'
export domain, lower with a backend (xnnpack/portable on CPU, tensorrt on GPU
targets), run every profile with the real ExecuTorch runtime against eager
PyTorch, and write the bundle atomically.

Runs the pipeline in this environment (`--local`) or inside the target's
builder image (`--container`, through `trt_edge.containers.build_runner`).
Exit codes: 0 bundle written, 1 the build or its validation failed, 2 bad
input (a manifest with errors — which `trt-edge validate` reports as 1 —, the
model source, an unavailable backend, bad flags). Errors are raised and
rendered by the CLI shell, never a traceback. torch and executorch are
imported only inside `run`, so `trt-edge --help` stays instant. Known-harmless
library noise (`trt_edge.library_noise`) is held back unless `-v` is given.
"""

from __future__ import annotations

import argparse

from trt_edge_runner.cli_args import at_least
from trt_edge_runner.cli_shell import Command

from trt_edge.cli._manifest import add_manifest_argument
from trt_edge.pipeline.stages import flow

BACKEND_CHOICES = ("auto", "xnnpack", "portable", "tensorrt")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_manifest_argument(parser)
    parser.add_argument(
        "--backend", choices=BACKEND_CHOICES, help="override the manifest's build.backend"
    )
    parser.add_argument("--out", default="dist", help="output directory (default: dist)")
    parser.add_argument(
        "--cache-dir", help="stage cache (default: $TRT_EDGE_CACHE or ~/.cache/trt-edge)"
    )
    parser.add_argument("--no-cache", action="store_true", help="rebuild every stage")
    parser.add_argument(
        "--log-format",
        choices=("console", "json"),
        default="console",
        help="console: a progress display (rich on a TTY, plain lines otherwise); json: "
        "structured log lines on stderr instead",
    )
    parser.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="structured log lines instead of the progress display, and what torch, torchao "
        "and ExecuTorch print that is known to be harmless (hidden by default)",
    )
    parser.add_argument(
        "--events",
        metavar="FILE",
        help="write the typed build event stream to FILE as JSON lines ('-': stdout); "
        "see docs/build-events.md",
    )
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--local", action="store_true", help="build in this environment")
    mode.add_argument("--container", action="store_true", help="build in the builder image")
    parser.add_argument("--target", help="target id from the catalog (default: first in manifest)")
    parser.add_argument("--image", help="builder image to use with --container")
    parser.add_argument(
        "--memory-headroom-mib",
        type=at_least(0),
        help="MiB of a board's memory kept free for the OS when judging whether the bundle "
        "fits the target (default: the manifest's build.memory_headroom_mib, else 1024)",
    )
    parser.add_argument(
        "--source-date-epoch",
        type=int,
        help="provenance date (default: $SOURCE_DATE_EPOCH, else the manifest's mtime)",
    )


def run(args: argparse.Namespace) -> int:
    from trt_edge.cli._build import run_build  # torch, executorch, Docker's SDK: only now

    return run_build(args)


COMMAND = Command(
    f"{flow()} (OUT/<name>-<version>/)",
    add_arguments=add_arguments,
    run=run,
)
