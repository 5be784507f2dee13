"""`trt-edge-device serve [--bundle DIR ...] [--host H] [--port P] [--runner PATH]`: the service.

One long-lived C++ engine (`trt-edge-run serve`) per loaded bundle behind an
OpenAI-compatible API (causal LMs), the Open Inference Protocol (KServe v2, every bundle)
and Prometheus `/metrics`. `--bundle` (repeatable) serves those bundles, each by its model
name, loaded on demand within `--memory-budget-mib`. Without `--bundle` it serves the
agent's active slot and follows installs and rollbacks (hot swap). Loopback by default;
any other address needs an API key.
Needs the `serve` extra (`pip install 'trt-edge-runner[serve]'`).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from trt_edge_runner.agent.config import add_location_arguments
from trt_edge_runner.cli_args import at_least
from trt_edge_runner.cli_shell import Command
from trt_edge_runner.errors import UsageError
from trt_edge_runner.memory_budget import DEFAULT_HEADROOM_MIB, MEMINFO

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--bundle",
        type=Path,
        action="append",
        default=[],
        metavar="DIR",
        help="serve this bundle directory; repeat it to serve several models, each by its "
        "model name, the first loaded at start and the others on their first request "
        "(default: the agent's active slot, followed across installs and rollbacks)",
    )
    add_serve_arguments(parser)
    add_swap_arguments(parser)
    add_location_arguments(parser)


def add_swap_arguments(parser: argparse.ArgumentParser) -> None:
    """How a hot swap judges whether the next bundle fits beside the served one (and what the
    default memory budget of several bundles keeps free)."""
    parser.add_argument(
        "--memory-headroom-mib",
        type=at_least(0, "--memory-headroom-mib"),
        default=DEFAULT_HEADROOM_MIB,
        help="memory kept free when loading the next bundle beside the served one (when both "
        "do not fit, the swap is in place: 503 while it loads), and off the default "
        f"--memory-budget-mib (default {DEFAULT_HEADROOM_MIB})",
    )
    parser.add_argument(
        "--meminfo",
        type=Path,
        default=MEMINFO,
        metavar="FILE",
        help=f"read the free memory from this file (default {MEMINFO})",
    )


def add_serve_arguments(parser: argparse.ArgumentParser) -> None:
    """The options `trt-edge-device serve` and the host's `trt-edge serve` share."""
    parser.add_argument(
        "--host", default=DEFAULT_HOST, help=f"address to bind (default {DEFAULT_HOST})"
    )
    parser.add_argument(
        "--port",
        type=at_least(0, "--port"),
        default=DEFAULT_PORT,
        help=f"port (default {DEFAULT_PORT})",
    )
    parser.add_argument(
        "--runner", type=Path, default=None, metavar="PATH",
        help="the trt-edge-run binary (else $TRT_EDGE_RUNNER, device.json runner, PATH)",
    )  # fmt: skip
    parser.add_argument(
        "--api-key",
        default=os.environ.get("TRT_EDGE_API_KEY"),
        help="bearer key clients must send (env TRT_EDGE_API_KEY); required off loopback",
    )
    parser.add_argument(
        "--tls-cert", type=Path, default=None, metavar="FILE", help="TLS certificate (PEM)"
    )
    parser.add_argument(
        "--tls-key", type=Path, default=None, metavar="FILE", help="TLS private key (PEM)"
    )
    parser.add_argument(
        "--max-queue",
        type=at_least(0, "--max-queue"),
        default=16,
        help="requests that may wait for the engine before new ones get 503 (default 16)",
    )
    parser.add_argument(
        "--request-timeout",
        type=float,
        default=300.0,
        metavar="SECONDS",
        help="deadline of a request, waiting included (default 300)",
    )
    parser.add_argument(
        "--memory-budget-mib",
        type=at_least(1, "--memory-budget-mib"),
        default=None,
        metavar="N",
        help="memory the loaded models may need together (each bundle's memory record); "
        "before loading one that would exceed it, the least recently used idle models are "
        "unloaded (default: the memory available at start less the headroom)",
    )
    parser.add_argument(
        "--no-verify", action="store_true", help="skip the engine's sha256 check of bundle files"
    )
    parser.add_argument(
        "--engine-threads",
        choices=("auto", "1", "all"),
        default="auto",
        help="threads of the engine's CPU kernels: 1 (the service's front end keeps a core to "
        "itself), all (ExecuTorch's thread pool) or auto (default: 1 when the service may "
        "use two cores or fewer and the bundle's weights are under 128 MiB, else all)",
    )


def run(args: argparse.Namespace) -> int:
    return serve_from_arguments(args, args.bundle, args.root)


def serve_from_arguments(args: argparse.Namespace, bundles: list[Path], root: Path) -> int:
    """Serve until stopped (both CLIs end here), or say which extra is missing."""
    try:
        from trt_edge_runner.serve.launch import launch  # starlette, uvicorn: only now
    except ImportError as exc:
        raise UsageError(
            f"the service needs the serve extra ({exc.name} is not installed)",
            hint="pip install 'trt-edge-runner[serve]'",
        ) from None
    return launch(args, bundles, root)


COMMAND = Command(
    "serve bundles: OpenAI-compatible API, KServe v2 and /metrics, one engine per loaded model",
    add_arguments=add_arguments,
    run=run,
)
