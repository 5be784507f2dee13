"""`trt-edge build MANIFEST`: export, lower, validate and bundle a model.

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
imported only inside `run`, so `trt-edge --help` stays instant.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
import warnings
from pathlib import Path
from typing import Any

from trt_edge_runner.cli_shell import Command
from trt_edge_runner.errors import UsageError, Where

from trt_edge.cli._manifest import add_manifest_argument

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
    parser.add_argument("--log-format", choices=("console", "json"), default="console")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--local", action="store_true", help="build in this environment")
    mode.add_argument("--container", action="store_true", help="build in the builder image")
    parser.add_argument("--target", help="target id from the catalog (default: first in manifest)")
    parser.add_argument("--image", help="builder image to use with --container")
    parser.add_argument(
        "--source-date-epoch",
        type=int,
        help="provenance date (default: $SOURCE_DATE_EPOCH, else the manifest's mtime)",
    )


def configure_logging(fmt: str, level: int) -> None:
    import structlog

    processors: list[Any] = [
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso" if fmt == "json" else "%H:%M:%S"),
    ]
    renderer: Any = (
        structlog.processors.JSONRenderer(sort_keys=True)
        if fmt == "json"
        else structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty())
    )
    structlog.configure(
        processors=[*processors, renderer],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=False,
    )


class RichProgress:
    """One spinner line per stage on a TTY; finished stages show their time."""

    def __init__(self, console: Any) -> None:
        from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        self.progress = Progress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            TimeElapsedColumn(),
            console=console,
            transient=False,
        )
        self.tasks: dict[str, Any] = {}

    def __enter__(self) -> RichProgress:
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def stage_started(self, stage: str) -> None:
        if stage not in self.tasks:
            self.tasks[stage] = self.progress.add_task(stage, total=1)

    def stage_finished(self, stage: str, seconds: float, cached: bool) -> None:
        task = self.tasks.get(stage)
        if task is not None:
            note = " (cached)" if cached else ""
            self.progress.update(task, completed=1, description=f"{stage}{note}")


def _choose_mode(args: argparse.Namespace) -> tuple[str, str]:
    requested = "container" if args.container else "local" if args.local else None
    if requested == "local":
        return "local", "--local"
    try:
        from trt_edge.containers import build_runner
    except ImportError:
        if requested == "container":
            return "unavailable", (
                "container builds need trt_edge.containers.build_runner, which this "
                "installation does not have; use --local"
            )
        return "local", "no container support installed: building locally"
    mode, reason = build_runner.choose_mode(args.target, requested, args.manifest)
    return str(mode), str(reason)


def _summary(console: Any, result: Any, elapsed: float) -> None:
    """The validation table, then plain lines (never wrapped: paths stay greppable)."""
    from trt_edge.pipeline.validate import parity_summary, render_table

    console.print(render_table(result.report.doc))
    size = sum(p.stat().st_size for p in result.bundle_dir.rglob("*") if p.is_file())
    lines = [
        "build summary",
        f"  bundle   {result.bundle_dir} ({size / 1024:.1f} KiB)",
        f"  backend  {result.backend} ({result.backend_reason})",
    ]
    for row in parity_summary(result.report.doc):
        verdict = "ok" if row["ok"] else "FAIL"
        lines.append(
            f"  profile {row['profile']} {row['name']}: parity {verdict}, "
            f"max abs error {row['max_abs']:.3g}"
        )
    stages = ", ".join(
        f"{stage} {seconds:.2f}s{' (cached)' if result.cached.get(stage) else ''}"
        for stage, seconds in result.stage_seconds.items()
    )
    lines.append(f"  stages   {stages}")
    lines.append(f"  total    {elapsed:.2f}s")
    for line in lines:
        console.print(line, soft_wrap=True, markup=False, highlight=False)


def run(args: argparse.Namespace) -> int:
    from rich.console import Console

    from trt_edge.pipeline.bundle import check_out_dir
    from trt_edge.pipeline.run import BuildOptions, build

    err = Console(stderr=True)
    out = Console()
    interactive = sys.stderr.isatty() and args.log_format == "console"
    configure_logging(args.log_format, logging.WARNING if interactive else logging.INFO)
    # torch/executorch emit deprecation chatter a user cannot act on.
    for category in (UserWarning, DeprecationWarning, FutureWarning):
        warnings.filterwarnings("ignore", category=category)
    manifest = require_manifest_file(Path(args.manifest))
    check_out_dir(Path(args.out))  # before choosing a mode or starting any slow work
    mode, reason = _choose_mode(args)
    if mode == "unavailable":
        raise UsageError(reason)
    progress = RichProgress(err) if interactive and mode != "container" else None
    options = BuildOptions(
        out_dir=Path(args.out),
        backend=args.backend,
        cache_dir=Path(args.cache_dir) if args.cache_dir else None,
        use_cache=not args.no_cache,
        source_date_epoch=args.source_date_epoch,
        progress=progress,
        target=args.target,
    )
    started = time.perf_counter()
    if mode == "container":
        from trt_edge.containers.build_runner import build_in_container

        err.print(f"building in a container: {reason}")
        result = build_in_container(manifest, options, args.target, args.image)
    elif progress is not None:
        with progress:
            result = build(manifest, options)
    else:
        result = build(manifest, options)
    _summary(out, result, time.perf_counter() - started)
    return 0


def require_manifest_file(manifest: Path) -> Path:
    """`manifest` if it is a file; a directory or a missing path is bad input, with a hint."""
    if manifest.is_dir():
        inside = manifest / "manifest.yaml"
        raise UsageError(
            "is a directory",
            where=Where(manifest),
            hint=f"did you mean {inside}?"
            if inside.is_file()
            else f"pass {inside} (the manifest file itself)",
        )
    if not manifest.is_file():
        raise UsageError("no such manifest file", where=Where(manifest))
    return manifest


COMMAND = Command(
    "export → lower → validate → bundle (OUT/<name>-<version>/)",
    add_arguments=add_arguments,
    run=run,
)
