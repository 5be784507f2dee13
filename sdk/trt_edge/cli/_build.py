"""The work of `trt-edge build` (`trt_edge.cli.build` is the command's face: its flags and
help, which `trt-edge --help` reads without importing this): the progress displays the
build's events drive, the mode chosen once, the build, and its summary.

Imported only when the command runs, so everything it needs is imported here at the top.
"""

from __future__ import annotations

import argparse
import io
import logging
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

import structlog
from rich.console import Console
from rich.progress import Progress, ProgressColumn, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.text import Text
from trt_edge_runner.bundle_format import BUNDLE_JSON, BundleManifest
from trt_edge_runner.errors import TrtEdgeError, UsageError, Where
from trt_edge_runner.memory_budget import mib

from trt_edge.cli._manifest import require_manifest_file
from trt_edge.containers.build_mode import BuildMode, choose_mode
from trt_edge.containers.build_runner import build_in_container
from trt_edge.library_noise import quiet_library_noise
from trt_edge.pipeline.bundle import check_out_dir
from trt_edge.pipeline.events import (
    BuildEvent,
    BuildFailed,
    EngineProgress,
    JsonLinesSink,
    StageFinished,
    StageStarted,
)
from trt_edge.pipeline.run import BuildOptions, build, load
from trt_edge.pipeline.stages import STAGES
from trt_edge.pipeline.validate import parity_summary, render_table


class StateColumn(ProgressColumn):
    """`·` waiting, a spinner while running, `✓` done."""

    spinner = SpinnerColumn()

    def render(self, task: Any) -> Any:
        if task.finished:
            return Text("✓", style="green")
        return self.spinner.render(task) if task.started else Text("·", style="dim")


def configure_logging(fmt: str, level: int) -> None:
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
    """One line per stage of `STAGES` on a TTY, all shown from the start: a spinner on the
    running one, the time on finished ones; a stage the cache made unnecessary says so."""

    def __init__(self, console: Any) -> None:
        self.progress = Progress(
            StateColumn(),
            TextColumn("{task.description}"),
            TimeElapsedColumn(),
            console=console,
            transient=False,
        )
        self.width = max(len(stage.name) for stage in STAGES)
        self.summaries = {stage.name: stage.summary for stage in STAGES}
        self.tasks: dict[str, Any] = {
            stage.name: self.progress.add_task(self._line(stage.name), total=1, start=False)
            for stage in STAGES
        }
        self.started: set[str] = set()

    def _line(self, stage: str, note: str = "") -> str:
        summary = note or f"[dim]{self.summaries.get(stage, '')}[/dim]"
        return f"{stage:<{self.width}}  {summary}"

    def __enter__(self) -> RichProgress:
        self.progress.start()
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        if exc_type is None:
            for stage, task in self.tasks.items():
                if stage not in self.started:
                    note = "not needed (a later stage's output was cached)"
                    self.progress.start_task(task)
                    self.progress.update(task, completed=1, description=self._line(stage, note))
        self.progress.stop()

    def _task(self, stage: str) -> Any:
        if stage not in self.tasks:  # a name this list does not know: show it, at the end
            self.tasks[stage] = self.progress.add_task(self._line(stage), total=1, start=False)
        return self.tasks[stage]

    def __call__(self, event: BuildEvent) -> None:
        """Draw a build event (`trt_edge.pipeline.events`); other events are not drawn."""
        if isinstance(event, StageStarted):
            self.stage_started(event.stage)
        elif isinstance(event, StageFinished):
            self.stage_finished(event.stage, event.seconds, event.cached)
        elif isinstance(event, EngineProgress):
            self.engine_progress(event.phase, event.step, event.steps)

    def engine_progress(self, phase: str, step: int, steps: int) -> None:
        """The TensorRT builder's phase, on the lower stage's line while it builds."""
        state = "done" if step >= steps else "…"
        note = f"[dim]TensorRT: {phase} {state}[/dim]"
        self.progress.update(self._task("lower"), description=self._line("lower", note))

    def stage_started(self, stage: str) -> None:
        self.started.add(stage)
        self.progress.start_task(self._task(stage))

    def stage_finished(self, stage: str, seconds: float, cached: bool) -> None:
        note = "cached" if cached else "done"
        self.progress.update(self._task(stage), completed=1, description=self._line(stage, note))


def _choose_mode(args: argparse.Namespace, resolved: Any) -> BuildMode:
    """Where this build runs (`build_runner.choose_mode`), decided once: a container build
    the tool chose carries what it found, which `_build` hands on instead of resolving it
    again."""
    requested = "container" if args.container else "local" if args.local else None
    return choose_mode(
        args.target, requested, args.manifest, backend=args.backend, resolved=resolved
    )


def _summary(console: Any, result: Any, elapsed: float) -> None:
    """The validation table, then plain lines (never wrapped: paths stay greppable)."""
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
    quality = result.report.doc.get("quality")
    if quality and quality.get("calls"):
        budget = quality.get("budget")
        within = (
            f" (budget: max abs {budget['max_abs']}, agreement >= {budget['min_agreement']}, "
            f"KL <= {budget['max_kl']})"
            if budget
            else ""
        )
        lines.append(
            f"  quality  {quality['scheme']} vs eager fp32: max abs {quality['max_abs']:.3g}, "
            f"greedy agreement {quality['agreement']:.3g}, mean KL {quality['mean_kl']:.3g}{within}"
        )
    stages = ", ".join(
        f"{stage} {seconds:.2f}s{' (cached)' if result.cached.get(stage) else ''}"
        for stage, seconds in result.stage_seconds.items()
    )
    lines.append(f"  stages   {stages}")
    peaks = getattr(result, "stage_peak_rss", None) or {}
    if peaks:
        worst = max(peaks, key=lambda stage: peaks[stage])
        lines.append(
            f"  peak RSS {peaks[worst] / 2**20:.0f} MiB (in {worst}); per stage: "
            + ", ".join(f"{stage} {peak / 2**20:.0f} MiB" for stage, peak in peaks.items())
        )
    lines += memory_lines(result.bundle_dir, result.memory_warnings)
    lines.append(f"  total    {elapsed:.2f}s")
    for line in lines:
        console.print(line, soft_wrap=True, markup=False, highlight=False)


def memory_lines(bundle_dir: Path, warnings: tuple[str, ...]) -> list[str]:
    """The summary's memory line (from the bundle's `memory` section) and its warnings."""
    memory = BundleManifest.from_json((bundle_dir / BUNDLE_JSON).read_bytes()).memory
    if memory is None:
        return []
    lines = [
        f"  memory   needs {mib(memory.total_bytes)}: weights {mib(memory.weights_bytes)}, "
        f"planned {mib(memory.planned_bytes)} (KV cache {mib(memory.kv_cache_bytes)}), "
        f"runner {mib(memory.runner_bytes)}"
    ]
    return lines + [f"  warning  {warning}" for warning in warnings]


class PlainProgress:
    """One plain line per finished stage on stderr (not a TTY: logs, CI, pipes)."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream

    def __call__(self, event: BuildEvent) -> None:
        if isinstance(event, StageFinished):
            cached = " (cached)" if event.cached else ""
            mib = event.peak_rss_bytes / 2**20
            peak = f"peak RSS {mib:.0f} MiB, " if event.peak_rss_bytes else ""
            print(
                f"{event.stage}: {peak}{event.seconds:.2f} s{cached}", file=self.stream, flush=True
            )


def _display(args: argparse.Namespace, err: Any) -> Any:
    """The progress display the build's events drive: rich on a TTY, plain lines
    otherwise, none when structured log lines were asked for (`--log-format json`, `-v`)."""
    if args.log_format != "console" or args.verbose:
        return None
    return RichProgress(err) if sys.stderr.isatty() else PlainProgress(sys.stderr)


@contextmanager
def _event_file(path: str | None) -> Iterator[Any]:
    """`--events FILE` (`-`: stdout): the typed event stream, one JSON line per event."""
    if path is None:
        yield None
        return
    if path == "-":
        yield JsonLinesSink(sys.stdout)
        return
    try:
        sink = JsonLinesSink.open(Path(path))
    except OSError as error:
        raise UsageError(
            f"cannot write the event stream: {error.strerror}", where=Where(path)
        ) from error
    try:
        yield sink
    finally:
        sink.close()


def _failed(error: TrtEdgeError) -> BuildEvent:
    """The `build_failed` event of an error: what the CLI shell would print for it."""
    details = io.StringIO()
    error.print_details(details, color=False)
    message = f"trt-edge build: error: {error}\n{details.getvalue()}".rstrip()
    return BuildFailed(message, error.hint or "", error.exit_code)


def run_build(args: argparse.Namespace) -> int:
    """`trt-edge build`'s work: load, choose the mode once, build, summarise."""
    err = Console(stderr=True)
    out = Console()
    verbose = args.verbose or args.log_format == "json"
    configure_logging(args.log_format, logging.INFO if verbose else logging.WARNING)
    manifest = require_manifest_file(Path(args.manifest))
    check_out_dir(Path(args.out))  # before choosing a mode or starting any slow work
    with _event_file(args.events) as stream:
        sinks = [sink for sink in (_display(args, err), stream) if sink is not None]
        try:
            resolved = load(manifest)  # once: the mode choice and the build share it
            mode = _choose_mode(args, resolved)
            started = time.perf_counter()
            result = _build(args, manifest, resolved, mode, sinks, err)
        except TrtEdgeError as error:
            if stream is not None:
                stream(_failed(error))
            raise
    _summary(out, result, time.perf_counter() - started)
    return 0


def _build(
    args: argparse.Namespace,
    manifest: Path,
    resolved: Any,
    mode: BuildMode,
    sinks: list[Any],
    err: Any,
) -> Any:
    options = BuildOptions(
        out_dir=Path(args.out),
        backend=args.backend,
        cache_dir=Path(args.cache_dir) if args.cache_dir else None,
        use_cache=not args.no_cache,
        source_date_epoch=args.source_date_epoch,
        events=tuple(sinks),
        target=args.target,
        memory_headroom_mib=args.memory_headroom_mib,
        manifest=resolved,
    )
    display = next((s for s in sinks if isinstance(s, RichProgress)), None)
    if mode.kind == "container":
        err.print(f"building in a container: {mode.reason}")
        with display if display is not None else nullcontext():
            return build_in_container(manifest, options, args.target, args.image, setup=mode.setup)
    quiet = nullcontext() if args.verbose else quiet_library_noise()
    with quiet, display if display is not None else nullcontext():
        return build(manifest, options)
