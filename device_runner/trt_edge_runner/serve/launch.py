"""The service from the command line's options (`trt-edge-device serve`, `trt-edge serve`):
check them, find the runner, serve until stopped. Imported only when a serve command runs
(`trt_edge_runner.commands.serve` catches the ImportError of a missing `serve` extra).
"""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

from trt_edge_runner.agent.config import find_runner, load_runner_settings
from trt_edge_runner.cli_args import require_dir
from trt_edge_runner.errors import UsageError, Where
from trt_edge_runner.serve.exposure import checked_exposure
from trt_edge_runner.serve.loaded_model import ServeOptions
from trt_edge_runner.serve.model_set import check_fits, configured_models, memory_budget
from trt_edge_runner.serve.server import Source, configure_logging, serve


def launch(args: argparse.Namespace, bundles: list[Path], root: Path) -> int:
    """Check the options, find the runner, serve until SIGINT/SIGTERM; 0 when stopped."""
    if args.request_timeout <= 0:
        raise UsageError(
            "must be a positive number of seconds", where=Where(option="--request-timeout")
        )
    exposure = checked_exposure(args.host, args.port, args.api_key, args.tls_cert, args.tls_key)
    models = configured_models(
        [require_dir(bundle, "bundle directory", option="--bundle") for bundle in bundles]
    )
    settings = load_runner_settings(args.config)
    runner = find_runner(args.runner, args.config, settings)
    options = ServeOptions(
        runner=runner.path,
        max_queue=args.max_queue,
        timeout_s=args.request_timeout,
        verify=not args.no_verify,
        engine_threads=args.engine_threads,
    )
    if hasattr(args, "meminfo"):  # only the device's CLI swaps (the host's serves bundles)
        options = dataclasses.replace(
            options, meminfo=args.meminfo, memory_headroom_mib=args.memory_headroom_mib
        )
    budget = None
    if models:
        budget = memory_budget(args.memory_budget_mib, options.meminfo, options.memory_headroom_mib)
        if len(models) > 1 or args.memory_budget_mib is not None:  # one alone: nothing to unload
            check_fits(models, budget)
    elif args.memory_budget_mib is not None:
        raise UsageError(
            "a memory budget applies to the bundles given with --bundle; the agent's active "
            "slot is one model, judged by hot swap against the free memory",
            where=Where(option="--memory-budget-mib"),
        )
    configure_logging()
    serve(Source(tuple(models), budget, root), options, exposure)
    return 0
