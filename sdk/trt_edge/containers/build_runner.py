"""`trt-edge build --container`: the `--local` pipeline, run inside the target's builder image.

The container gets the manifest's folder read-only, a private staging folder inside
the output directory and the stage cache, all mounted at their host paths (so
messages and provenance name the same paths as a local build); it runs as the
host's uid/gid (outputs are not root-owned), with no network, memory/CPU/pids
limits, GPUs only for a TensorRT build, and a timeout. The builder image follows the
backend that will run (`builder_choice`): a CPU bundle builds in the `cpu` builder
whatever its target, a TensorRT one in the target's GPU builder. Its structured
typed event stream (`trt_edge.pipeline.events`, on its stdout) drives the host's
progress display and `BuildResult`; its log lines are for people only.

A manifest with `model.requirements` builds in a derived image: the builder plus the
wheels of the manifest's requirements lock (`requirements_lock`, made on the host by
`trt-edge lock MANIFEST`), built offline (`requirements_image`) and reused while the
builder and the lock are unchanged. A missing or stale lock is refused before the
daemon is asked. The host tells the build inside which image it runs in
(`$TRT_EDGE_BUILD_ENVIRONMENT`): that identity is part of every stage cache key, so a
container build never reuses a stage computed on the host or in another image.

The container is removed on
success, failure, timeout, Ctrl-C and SIGTERM; a failed build removes its staging
folder, so no partial bundle is ever left. On success the host merges provenance
(image id/digest, lock hash, host facts, the builder choice and why, the requirements
lock and image) into `bundle.json`
and moves the bundle into
place atomically with the pipeline's `StagedBundle` (the previous bundle stays
intact until the final swap).

Each fact is decided once and handed on as a value, so a build never resolves its
target, builder or requirements lock twice and every decision is testable without a
daemon: `build_mode.choose_mode` → `BuildMode` (local or container, why, and the
`ContainerSetup` it found: target, builder choice, checked lock, current image);
`container_plan.image_for_run` → `RunImage` (the image the build runs in);
`container_plan.plan_container` → `ContainerPlan` (image, command, mounts, environment,
limits: pure). This module drives the container: `run_plan` (the only part that runs one)
→ `ContainerExit`; `exit_error` (pure) → the error a failed exit is reported as; the host's
side of the event stream; and `build_in_container`, which strings them together.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import shutil
import signal
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

from trt_edge_runner.bundle_format import BUNDLE_JSON, BundleManifest

from trt_edge.containers.builder_choice import BuilderChoice
from trt_edge.containers.daemon import connect, is_daemon_error
from trt_edge.containers.errors import (
    ContainerBuildError,
    ContainerResourceError,
    ContainerTimeoutError,
)
from trt_edge.containers.gpu import daemon_has_nvidia_runtime
from trt_edge.containers.provenance import container_builder
from trt_edge.containers.reference import check_image_reference
from trt_edge.memory import bundle_warnings
from trt_edge.pipeline import events
from trt_edge.pipeline.bundle import StagedBundle, write_bundle_json
from trt_edge.pipeline.cache import default_cache_dir

if TYPE_CHECKING:
    from docker import DockerClient
    from docker.models.containers import Container

    from trt_edge.manifest.resolved import ResolvedManifest
    from trt_edge.pipeline.run import BuildOptions, BuildResult

from trt_edge.containers.build_mode import ContainerSetup, resolve_setup
from trt_edge.containers.container_plan import (
    BuildFolders,
    ContainerLimits,
    ContainerPlan,
    RunImage,
    image_for_run,
    plan_container,
)

# --- running the plan -------------------------------------------------------------------


@dataclass(frozen=True)
class ContainerExit:
    """How a build container ended: its exit status, whether the kernel killed it for
    memory, whether the host killed it for running past its timeout."""

    status: int
    oom_killed: bool = False
    timed_out: bool = False


def _check_gpu_runtime(client: DockerClient, builder: BuilderChoice) -> None:
    """A TensorRT build needs the engine to pass GPUs (`choose_builder` refused one on a
    host without GPUs): refused before anything is built or created."""
    if builder.needs_gpu and not daemon_has_nvidia_runtime(client):
        raise ContainerBuildError(
            "this host has NVIDIA GPUs but the Docker engine cannot pass them to containers; "
            "install the NVIDIA Container Toolkit (`sudo apt-get install -y "
            "nvidia-container-toolkit && sudo nvidia-ctk runtime configure --runtime=docker "
            "&& sudo systemctl restart docker`)",
            exit_code=2,
        )


def _device_requests(gpus: bool) -> list[Any] | None:
    if not gpus:
        return None
    from docker.types import DeviceRequest

    return [DeviceRequest(count=-1, capabilities=[["gpu"]])]


def _lines(container: Container) -> Iterator[str]:
    buffer = b""
    for chunk in container.logs(stream=True, follow=True, stdout=True, stderr=True):
        buffer += chunk
        *complete, buffer = buffer.split(b"\n")
        for raw in complete:
            yield raw.decode("utf-8", "replace").rstrip("\r")
    if buffer:
        yield buffer.decode("utf-8", "replace")


class _Terminated(KeyboardInterrupt):
    """SIGTERM during a container build: unwind like Ctrl-C, so `finally` removes the
    container and the CLI reports "interrupted" (exit 130) instead of a traceback."""


@contextmanager
def _sigterm_unwinds() -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: FrameType | None) -> None:
        raise _Terminated(f"signal {signum}")

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _remove(container: Container) -> None:
    import docker.errors

    try:
        container.remove(force=True)
    except docker.errors.NotFound:
        pass
    except docker.errors.APIError as err:
        if "already in progress" not in str(err):
            raise


def _follow(
    container: Container, timeout_s: float, on_line: Callable[[str], None]
) -> ContainerExit:
    """Start `container`, hand each output line to `on_line` until it exits, and kill it
    once it runs past `timeout_s`."""
    timed_out = threading.Event()

    def kill_on_timeout() -> None:
        timed_out.set()
        # The container may be gone already: the build ended as the timer fired.
        with contextlib.suppress(Exception):
            container.kill()

    timer = threading.Timer(timeout_s, kill_on_timeout)
    timer.daemon = True
    container.start()
    timer.start()
    try:
        for line in _lines(container):
            on_line(line)
        status = int(container.wait().get("StatusCode", 1))
    finally:
        timer.cancel()
    container.reload()
    oom = bool(container.attrs.get("State", {}).get("OOMKilled", False))
    return ContainerExit(status, oom_killed=oom, timed_out=timed_out.is_set())


def run_plan(
    client: DockerClient, plan: ContainerPlan, on_line: Callable[[str], None]
) -> ContainerExit:
    """Create and run the container of `plan`; it is removed however the run ends
    (exit, timeout, an error in `on_line`, Ctrl-C, SIGTERM)."""
    container: Container | None = None
    try:
        with _sigterm_unwinds():
            container = client.containers.create(
                plan.image,
                list(plan.command),
                device_requests=_device_requests(plan.gpus),
                **plan.docker_arguments(),
            )
            return _follow(container, plan.limits.timeout_s, on_line)
    finally:
        if container is not None:
            _remove(container)


def exit_error(
    ended: ContainerExit,
    output: str,
    *,
    manifest: Path,
    image: str,
    limits: ContainerLimits,
) -> ContainerBuildError | None:
    """The error a container's exit is reported as (None: it succeeded). `output` is what
    the build said about its failure (`_EventState.error_text`); `image` names the image
    in the message. The build's own exit codes (1: it failed, 2: bad input) pass through;
    anything else is a kill, which says which limit or signal it was."""
    if ended.timed_out:
        return ContainerTimeoutError(
            f"the container build of {manifest} ran longer than {limits.timeout_s:.0f} s "
            "and was killed; raise TRT_EDGE_CONTAINER_TIMEOUT (seconds) if it needs longer"
        )
    if ended.oom_killed:
        return ContainerResourceError(
            f"the container build of {manifest} exceeded its memory limit "
            f"({limits.memory}) and was killed; raise it with TRT_EDGE_CONTAINER_MEMORY "
            "(e.g. 8g)"
        )
    status = ended.status
    if status == 0:
        return None
    if status in (2, 1):
        return ContainerBuildError(
            f"the build failed inside the container ({image}, exit {status}):\n"
            f"{output or '(no output)'}",
            exit_code=status,
        )
    return ContainerResourceError(
        f"the container build of {manifest} ended with status {status}"
        + (f" (killed by signal {status - 128})" if status > 128 else "")
        + f"; last output:\n{output}"
    )


# --- the host's side of the event stream ------------------------------------------------


@dataclass
class _EventState:
    """What the host learns from the build's typed event stream (`trt_edge.pipeline.events`),
    which the build inside writes to stdout (`--events -`); every other line of output is
    kept (the last 60) only to explain a build that died without saying why."""

    stage_seconds: dict[str, float] = field(default_factory=dict)
    stage_peak_rss: dict[str, int] = field(default_factory=dict)
    cached: dict[str, bool] = field(default_factory=dict)
    backend: str = ""
    backend_reason: str = ""
    failure: str = ""
    text_tail: list[str] = field(default_factory=list)

    def error_text(self) -> str:
        """The build's own error (its `build_failed` event), else the output's tail."""
        if self.failure:
            return self.failure
        return "\n".join(self.text_tail[-20:]).strip()


def _handle_line(
    line: str, state: _EventState, options: BuildOptions, echo: Callable[[str], None]
) -> None:
    try:
        event = events.from_json(line)
    except events.EventStreamError as err:
        raise ContainerBuildError(
            f"the builder image speaks another build event protocol ({err})",
            hint="rebuild the builder image from this checkout (`trt-edge images build NAME`)",
        ) from err
    if event is None:
        state.text_tail.append(line)
        del state.text_tail[:-60]
        return
    for sink in options.events:
        sink(event)
    if isinstance(event, events.StageFinished):
        stage = event.stage
        state.stage_seconds[stage] = state.stage_seconds.get(stage, 0.0) + event.seconds
        state.cached[stage] = event.cached
        if event.peak_rss_bytes:
            state.stage_peak_rss[stage] = max(
                state.stage_peak_rss.get(stage, 0), event.peak_rss_bytes
            )
        if not options.events:
            cached = " (cached)" if event.cached else ""
            echo(f"[container] {stage}: {event.seconds:.2f} s{cached}")
    elif isinstance(event, events.BackendChosen):
        state.backend, state.backend_reason = event.backend, event.reason
    elif isinstance(event, events.BuildWarning):
        echo(f"[container] warning: {event.message}")
    elif isinstance(event, events.BuildFailed):
        hint = f"\n  hint: {event.hint}" if event.hint else ""
        state.failure = f"{event.message}{hint}"


# --- the build ----------------------------------------------------------------------------


def _finish(staging: Path, out_dir: Path, builder: dict[str, Any]) -> Path:
    """Merge provenance into the staged bundle.json and swap the bundle into place."""
    bundles = [p for p in staging.iterdir() if p.is_dir() and not p.name.startswith(".")]
    if len(bundles) != 1:
        raise ContainerBuildError(
            f"the container build exited 0 but left {len(bundles)} bundles in {staging}"
        )
    produced = bundles[0]
    document = BundleManifest.from_json((produced / BUNDLE_JSON).read_bytes())
    provenance = dict(document.provenance)
    provenance["builder"] = builder
    write_bundle_json(produced, dataclasses.replace(document, provenance=provenance))
    staged = StagedBundle(out_dir, produced.name)
    os.rmdir(staged.path)
    os.rename(produced, staged.path)
    return staged.commit()


def build_in_container(
    manifest_path: Path | str,
    options: BuildOptions,
    target: str | None,
    image: str | None,
    *,
    setup: ContainerSetup | None = None,
    limits: ContainerLimits | None = None,
    client: DockerClient | None = None,
    echo: Callable[[str], None] | None = None,
) -> BuildResult:
    """Run the build pipeline in the target's builder image; see the module docstring.

    `setup` is what `choose_mode` found for these same arguments (its `BuildMode.setup`),
    used as is when it was resolved for the manifest the build loads (`options.manifest`).
    Raises a `ContainerError` for what went wrong around or inside the container,
    and the pipeline's own `BuildError` for a manifest mistake found on the host.
    """
    try:
        return _build_in_container(
            manifest_path, options, target, image, setup, limits, client, echo
        )
    except Exception as err:
        if is_daemon_error(err):
            raise ContainerBuildError(
                f"the Docker engine failed the container build: {err}"
            ) from err
        raise


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _manifest_file(manifest_path: Path | str) -> Path:
    manifest = Path(manifest_path).resolve()
    if not manifest.is_file():
        raise ContainerBuildError(f"{manifest}: no such manifest file", exit_code=2)
    return manifest


def _folders(manifest: Path, options: BuildOptions) -> tuple[Path, BuildFolders]:
    """(output directory, folders) of a build, made; the staging folder is new and private."""
    out_dir = options.out_dir.resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    cache = (options.cache_dir or default_cache_dir()).expanduser().resolve()
    cache.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".trt-edge-container-", dir=out_dir))
    return out_dir, BuildFolders(manifest, staging, cache)


def _build_in_container(
    manifest_path: Path | str,
    options: BuildOptions,
    target_id: str | None,
    image: str | None,
    setup: ContainerSetup | None,
    limits: ContainerLimits | None,
    client: DockerClient | None,
    echo: Callable[[str], None] | None,
) -> BuildResult:
    from trt_edge.pipeline.run import load  # imports numpy: not at `trt-edge --help` time

    limits = limits or ContainerLimits.from_env()
    echo = echo or _stderr
    manifest = _manifest_file(manifest_path)
    # A manifest mistake is reported from the host, at once and exactly as --local
    # reports it, instead of after starting a container (no torch is imported here).
    resolved = options.manifest or load(manifest)  # once per build
    if setup is None or setup.manifest is not resolved:
        setup = resolve_setup(resolved, target_id, options.backend)  # before the daemon
    if image is not None:
        check_image_reference(image, "--image")  # a typo is exit 2 before the daemon is asked
    client = client or connect()
    _check_gpu_runtime(client, setup.builder)
    run_image = image_for_run(client, setup, resolved, image, echo)
    out_dir, folders = _folders(manifest, options)
    state = _EventState()
    try:
        plan = plan_container(
            folders,
            resolved,
            options,
            setup,
            run_image,
            limits,
            user=f"{os.getuid()}:{os.getgid()}",
            host_environment=os.environ,
        )
        ended = run_plan(client, plan, lambda line: _handle_line(line, state, options, echo))
        error = exit_error(
            ended, state.error_text(), manifest=manifest, image=run_image.builder_tag, limits=limits
        )
        if error is not None:
            raise error
        builder = _builder_doc(run_image, client, limits, setup.builder, image)
        bundle_dir = _finish(folders.staging, out_dir, builder)
    finally:
        shutil.rmtree(folders.staging, ignore_errors=True)
    return _result(bundle_dir, state, options, resolved)


def _result(
    bundle_dir: Path, state: _EventState, options: BuildOptions, resolved: ResolvedManifest
) -> BuildResult:
    """The `BuildResult` of a container build: the bundle's own report, and what the
    event stream said about the stages and the backend."""
    from trt_edge.pipeline.run import BuildResult  # imports numpy, as above
    from trt_edge.pipeline.validate import ValidationReport

    report_path = bundle_dir / "reports" / "validation.json"
    report = ValidationReport(json.loads(report_path.read_text(encoding="utf-8")))
    headroom = options.memory_headroom_mib
    return BuildResult(
        bundle_dir=bundle_dir,
        report=report,
        stage_seconds=dict(state.stage_seconds),
        stage_peak_rss=dict(state.stage_peak_rss),
        cached=dict(state.cached),
        backend=state.backend,
        backend_reason=state.backend_reason,
        memory_warnings=bundle_warnings(
            bundle_dir, headroom if headroom is not None else resolved.memory_headroom_mib
        ),
    )


def _builder_doc(
    image: RunImage,
    client: DockerClient,
    limits: ContainerLimits,
    choice: BuilderChoice,
    image_flag: str | None,
) -> dict[str, Any]:
    """`provenance.builder`: the builder image, the engine, the limits, and the choice."""
    chosen = choice.provenance()
    if image_flag is not None:  # --image overrides the choice; record both
        chosen["reason"] = f"--image {image_flag} given (the backend's builder: {choice.image})"
    return container_builder(
        chosen,
        image_tag=image.builder_tag,
        image_id=image.builder_id,
        repo_digests=list(image.builder_digests),
        labels=dict(image.builder_labels),
        engine_version=str(client.version().get("Version", "?")),
        limits=limits.doc(),
        requirements=image.requirements,
    )
