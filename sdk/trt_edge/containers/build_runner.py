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
engine is asked. The host tells the build inside which image it runs in
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
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import shutil
import signal
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

from trt_edge.containers import catalog
from trt_edge.containers.builder_choice import BuilderChoice, choose_builder
from trt_edge.containers.engine import is_engine_error
from trt_edge.containers.errors import (
    ContainerBuildError,
    ContainerError,
    ContainerResourceError,
    ContainerTimeoutError,
    ImageMissingError,
)

if TYPE_CHECKING:
    from docker import DockerClient
    from docker.models.containers import Container

    from trt_edge.containers.requirements_lock import RequirementsLock
    from trt_edge.manifest.resolved import ResolvedManifest
    from trt_edge.pipeline.run import BuildOptions, BuildResult
    from trt_edge.targets import Target

MODE_ENV = "TRT_EDGE_BUILD_MODE"  # 'local' | 'container': the default when no flag is given
CONTAINER_LABEL = "io.trt-edge.build"
DEFAULT_TARGET = "cpu-x86_64"


@dataclass(frozen=True)
class ContainerLimits:
    """Resource limits of a build container; each overridable by an environment variable."""

    memory: str = "6g"  # TRT_EDGE_CONTAINER_MEMORY
    cpus: float = float(os.cpu_count() or 1)  # TRT_EDGE_CONTAINER_CPUS
    pids: int = 4096  # TRT_EDGE_CONTAINER_PIDS
    timeout_s: float = 3600.0  # TRT_EDGE_CONTAINER_TIMEOUT (seconds)

    @classmethod
    def from_env(cls) -> ContainerLimits:
        env = os.environ
        default = cls()
        return cls(
            memory=env.get("TRT_EDGE_CONTAINER_MEMORY", default.memory),
            cpus=float(env.get("TRT_EDGE_CONTAINER_CPUS", default.cpus)),
            pids=int(env.get("TRT_EDGE_CONTAINER_PIDS", default.pids)),
            timeout_s=float(env.get("TRT_EDGE_CONTAINER_TIMEOUT", default.timeout_s)),
        )

    def doc(self) -> dict[str, Any]:
        return {"memory": self.memory, "cpus": self.cpus, "pids": self.pids}


def _target(target_id: str | None, resolved: ResolvedManifest | None = None) -> Target:
    from trt_edge.targets import load_catalog

    if target_id is None and resolved is not None and resolved.targets:
        target_id = resolved.targets[0]
    try:
        return load_catalog().get(target_id or DEFAULT_TARGET)
    except KeyError as err:
        raise ContainerBuildError(str(err), exit_code=2) from err


def _read_manifest(manifest_path: Path | None) -> ResolvedManifest | None:
    """The manifest when it loads without errors, else None (the build reports them)."""
    if manifest_path is None:
        return None
    from trt_edge.manifest import load_manifest

    return load_manifest(manifest_path).manifest


def choose_builder_for(target: Target, backend: str) -> BuilderChoice:
    """The builder for `target` and `backend` on this host (`ContainerBuildError` if none)."""
    from trt_edge.containers.gpu import host_gpus
    from trt_edge.targets import load_catalog

    return choose_builder(target, backend, bool(host_gpus()), load_catalog())


def choose_mode(
    target: str | None,
    requested: str | None,
    manifest: Path | str | None = None,
    backend: str | None = None,
    resolved: ResolvedManifest | None = None,
) -> tuple[str, str]:
    """('local'|'container', why). Without a flag: container when an engine answers and the
    builder image of the backend that will run is current, else local with the reason and
    the fixing command.

    `$TRT_EDGE_BUILD_MODE` (local/container) stands in for a missing flag. Without a
    target, the manifest's first target is used when `manifest` is given, else cpu-x86_64;
    without a backend, the manifest's (else auto).
    """
    env_mode = os.environ.get(MODE_ENV)
    if requested is None and env_mode in ("local", "container"):
        requested = env_mode
        how = f"{MODE_ENV}={env_mode}"
    else:
        how = f"--{requested}"
    if requested == "local":
        return "local", how
    if requested == "container":
        return "container", how
    from trt_edge.containers.engine import connect
    from trt_edge.containers.images import find_current

    manifest_path = Path(manifest) if manifest is not None else None
    if resolved is None:
        resolved = _read_manifest(manifest_path)
    try:
        chosen = _target(target, resolved)
        choice = choose_builder_for(chosen, backend or (resolved.backend if resolved else "auto"))
    except ContainerError as err:
        return "local", f"{err}; building locally"
    name = choice.image
    try:
        client = connect(timeout=15)
    except ContainerError:
        return "local", "no Docker engine reachable: building locally (--local)"
    try:
        ref = find_current(client, name)
    except ContainerError as err:
        return "local", f"builder image {name!r} unusable ({err}): building locally"
    finally:
        client.close()
    if ref is None:
        return "local", (
            f"no current builder image {catalog.REPOSITORY_PREFIX}{name} for this checkout: "
            f"building locally; `trt-edge images build {name}` enables container builds"
        )
    unready = _requirements_unready(resolved, name)
    if unready is not None:
        return "local", unready
    return "container", (
        f"Docker engine reachable and builder image {ref.tag} is current ({choice.reason})"
    )


def _requirements_unready(resolved: ResolvedManifest | None, builder: str) -> str | None:
    """Why a manifest's requirements cannot be installed in `builder` now (no current
    lock), or None (none declared, or the lock is current)."""
    if resolved is None or not resolved.requirements:
        return None
    from trt_edge.containers.requirements_lock import check_lock

    try:
        check_lock(resolved, catalog.load_spec(builder))
    except ContainerError as err:
        hint = f"; {err.hint}" if err.hint else ""
        return f"{err}{hint}: building locally (a current lock enables container builds)"
    return None


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
    from trt_edge.pipeline import events

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


def _resolve_image(
    client: DockerClient, target: Target, choice: BuilderChoice, image: str | None
) -> tuple[str, Any]:
    import docker.errors

    from trt_edge.containers.images import find_current

    name = choice.image
    if image is not None:
        try:
            return image, client.images.get(image)
        except docker.errors.ImageNotFound as err:
            raise ImageMissingError(
                f"builder image {image!r} (--image) is not present locally; build it with "
                f"`trt-edge images build {name}` or load it with `docker load -i FILE`",
                exit_code=2,
            ) from err
    ref = find_current(client, name)
    if ref is None:
        raise ImageMissingError(
            f"no current builder image {catalog.REPOSITORY_PREFIX}{name} for target "
            f"{target.id!r} with backend {choice.backend} (missing, or built from other "
            "sources/lock); build it with "
            f"`trt-edge images build {name}`, or build with --local",
            exit_code=2,
        )
    return ref.tag, client.images.get(ref.id)


def _device_requests(client: DockerClient, choice: BuilderChoice) -> list[Any]:
    """The host's GPUs for a TensorRT build (`choose_builder` refused one without GPUs)."""
    if not choice.needs_gpu:
        return []
    from docker.types import DeviceRequest

    from trt_edge.containers.gpu import engine_has_nvidia_runtime

    if not engine_has_nvidia_runtime(client):
        raise ContainerBuildError(
            "this host has NVIDIA GPUs but the Docker engine cannot pass them to containers; "
            "install the NVIDIA Container Toolkit (`sudo apt-get install -y "
            "nvidia-container-toolkit && sudo nvidia-ctk runtime configure --runtime=docker "
            "&& sudo systemctl restart docker`)",
            exit_code=2,
        )
    return [DeviceRequest(count=-1, capabilities=[["gpu"]])]


def _command(
    manifest: Path, staging: Path, cache: Path, options: BuildOptions, target: str
) -> list[str]:
    command = ["trt-edge", "build", str(manifest), "--local", "--out", str(staging)]
    command += ["--cache-dir", str(cache), "--log-format", "json", "--target", target]
    command += ["--events", "-"]  # the typed event stream, on stdout: what the host reads
    if options.backend:
        command += ["--backend", options.backend]
    if not options.use_cache:
        command.append("--no-cache")
    if options.source_date_epoch is not None:
        command += ["--source-date-epoch", str(options.source_date_epoch)]
    if options.memory_headroom_mib is not None:
        command += ["--memory-headroom-mib", str(options.memory_headroom_mib)]
    return command


def _finish(staging: Path, out_dir: Path, builder: dict[str, Any]) -> Path:
    """Merge provenance into the staged bundle.json and swap the bundle into place."""
    from trt_edge_runner.bundle_format import BUNDLE_JSON, BundleManifest

    from trt_edge.pipeline.bundle import StagedBundle, write_bundle_json

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
    limits: ContainerLimits | None = None,
    client: DockerClient | None = None,
    echo: Callable[[str], None] | None = None,
) -> BuildResult:
    """Run the build pipeline in the target's builder image; see the module docstring.

    Raises a `ContainerError` for what went wrong around or inside the container,
    and the pipeline's own `BuildError` for a manifest mistake found on the host.
    """
    try:
        return _build_in_container(manifest_path, options, target, image, limits, client, echo)
    except Exception as err:
        if is_engine_error(err):
            raise ContainerBuildError(
                f"the Docker engine failed the container build: {err}"
            ) from err
        raise


def _stderr(line: str) -> None:
    import sys

    print(line, file=sys.stderr, flush=True)


def _build_in_container(
    manifest_path: Path | str,
    options: BuildOptions,
    target_id: str | None,
    image: str | None,
    limits: ContainerLimits | None,
    client: DockerClient | None,
    echo: Callable[[str], None] | None,
) -> BuildResult:
    from trt_edge.containers.engine import connect
    from trt_edge.pipeline.cache import default_cache_dir
    from trt_edge.pipeline.run import BuildResult
    from trt_edge.pipeline.validate import ValidationReport

    limits = limits or ContainerLimits.from_env()
    echo = echo or _stderr
    manifest = Path(manifest_path).resolve()
    if not manifest.is_file():
        raise ContainerBuildError(f"{manifest}: no such manifest file", exit_code=2)
    # A manifest mistake is reported from the host, at once and exactly as --local
    # reports it, instead of after starting a container (no torch is imported here).
    from trt_edge.pipeline.run import load

    resolved = options.manifest or load(manifest)  # once per build
    target = _target(target_id, resolved)
    choice = choose_builder_for(target, options.backend or resolved.backend)
    lock = None
    if resolved.requirements:
        from trt_edge.containers.requirements_lock import check_lock

        lock = check_lock(resolved, catalog.load_spec(choice.image))  # before the engine
    if image is not None:
        from trt_edge.containers.reference import check_image_reference

        check_image_reference(image, "--image")  # a typo is exit 2 before the engine is asked
    client = client or connect()
    devices = _device_requests(client, choice)
    image_tag, image_obj = _resolve_image(client, target, choice, image)
    run_tag, run_id, requirements = _requirements_image(
        client, resolved, choice, image_tag, image_obj, lock, echo
    )
    out_dir = options.out_dir.resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    cache = (options.cache_dir or default_cache_dir()).expanduser().resolve()
    cache.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".trt-edge-container-", dir=out_dir))
    state = _EventState()
    container: Container | None = None
    timed_out = threading.Event()
    from trt_edge.pipeline.environment import ENVIRONMENT_ENV, container_description

    builder_lock = (image_obj.labels or {}).get(catalog.LABEL_LOCK)
    environment = {
        "HOME": "/tmp",
        "PYTHONUNBUFFERED": "1",
        "TRT_EDGE_CACHE": str(cache),
        # Which image the stages run in: part of every stage cache key inside.
        ENVIRONMENT_ENV: container_description(
            run_id, str(image_obj.id), builder_lock, lock.sha256() if lock else None
        ),
    }
    if "SOURCE_DATE_EPOCH" in os.environ:
        environment["SOURCE_DATE_EPOCH"] = os.environ["SOURCE_DATE_EPOCH"]
    try:
        with _sigterm_unwinds():
            container = client.containers.create(
                run_tag,
                _command(manifest, staging, cache, options, target.id),
                user=f"{os.getuid()}:{os.getgid()}",
                network_mode="none",
                mem_limit=limits.memory,
                memswap_limit=limits.memory,  # no swap: the limit is the limit
                nano_cpus=int(limits.cpus * 1e9),
                pids_limit=limits.pids,
                volumes={
                    **_source_mounts(manifest, resolved),
                    str(staging): {"bind": str(staging), "mode": "rw"},
                    str(cache): {"bind": str(cache), "mode": "rw"},
                },
                environment=environment,
                working_dir=str(manifest.parent),
                labels={CONTAINER_LABEL: "1"},
                device_requests=devices or None,
                entrypoint=[],
            )
            running = container

            def kill_on_timeout() -> None:
                timed_out.set()
                # The container may be gone already: the build ended as the timer fired.
                with contextlib.suppress(Exception):
                    running.kill()

            timer = threading.Timer(limits.timeout_s, kill_on_timeout)
            timer.daemon = True
            container.start()
            timer.start()
            try:
                for line in _lines(container):
                    _handle_line(line, state, options, echo)
                status = int(container.wait().get("StatusCode", 1))
            finally:
                timer.cancel()
            container.reload()
            oom = bool(container.attrs.get("State", {}).get("OOMKilled", False))
        if timed_out.is_set():
            raise ContainerTimeoutError(
                f"the container build of {manifest} ran longer than {limits.timeout_s:.0f} s "
                "and was killed; raise TRT_EDGE_CONTAINER_TIMEOUT (seconds) if it needs longer"
            )
        if oom:
            raise ContainerResourceError(
                f"the container build of {manifest} exceeded its memory limit "
                f"({limits.memory}) and was killed; raise it with TRT_EDGE_CONTAINER_MEMORY "
                "(e.g. 8g)"
            )
        if status != 0:
            if status in (2, 1):
                detail = state.error_text() or "(no output)"
                raise ContainerBuildError(
                    f"the build failed inside the container ({image_tag}, exit {status}):\n"
                    f"{detail}",
                    exit_code=status,
                )
            raise ContainerResourceError(
                f"the container build of {manifest} ended with status {status}"
                + (f" (killed by signal {status - 128})" if status > 128 else "")
                + f"; last output:\n{state.error_text()}"
            )
        engine = client.version().get("Version", "?")
        builder = _builder_doc(image_tag, image_obj, engine, limits, choice, image, requirements)
        bundle_dir = _finish(staging, out_dir, builder)
    finally:
        if container is not None:
            _remove(container)
        shutil.rmtree(staging, ignore_errors=True)
    from trt_edge.memory import bundle_warnings

    report_path = bundle_dir / "reports" / "validation.json"
    report = ValidationReport(json.loads(report_path.read_text(encoding="utf-8")))
    return BuildResult(
        bundle_dir=bundle_dir,
        report=report,
        stage_seconds=dict(state.stage_seconds),
        stage_peak_rss=dict(state.stage_peak_rss),
        cached=dict(state.cached),
        backend=state.backend,
        backend_reason=state.backend_reason,
        memory_warnings=bundle_warnings(
            bundle_dir,
            options.memory_headroom_mib
            if options.memory_headroom_mib is not None
            else resolved.memory_headroom_mib,
        ),
    )


def _source_mounts(manifest: Path, resolved: ResolvedManifest) -> dict[str, dict[str, str]]:
    """Read-only mounts of what the build reads: the manifest's folder, and a Hugging Face
    model folder that lies outside it (at its host path, as the manifest names it)."""
    mounts = {str(manifest.parent): {"bind": str(manifest.parent), "mode": "ro"}}
    source = resolved.huggingface
    if source is not None and not source.folder.resolve().is_relative_to(manifest.parent):
        mounts[str(source.folder)] = {"bind": str(source.folder), "mode": "ro"}
    return mounts


def _requirements_image(
    client: DockerClient,
    resolved: ResolvedManifest,
    choice: BuilderChoice,
    image_tag: str,
    image_obj: Any,
    lock: RequirementsLock | None,
    echo: Callable[[str], None],
) -> tuple[str, str, dict[str, Any] | None]:
    """(tag, id) of the image the build runs in — the builder, or the builder plus the
    manifest's locked requirements — and what provenance records about the requirements.

    The lock was checked against this checkout's builder lock; an image given with
    --image may come from another lock (or builder), so it is checked against that one."""
    if lock is None:
        return image_tag, str(image_obj.id), None
    from trt_edge.containers.requirements_image import ensure_requirements_image
    from trt_edge.containers.requirements_lock import check_lock

    labels = dict(image_obj.labels or {})
    builder = labels.get(catalog.LABEL_IMAGE) or choice.image
    builder_lock = labels.get(catalog.LABEL_LOCK)
    if builder != lock.header.builder or (
        builder_lock is not None and builder_lock != lock.header.builder_lock_sha256
    ):
        lock = check_lock(resolved, catalog.load_spec(builder), builder_lock)
    derived = ensure_requirements_image(
        client,
        builder,
        image_tag,
        image_obj,
        lock,
        manifest_path=resolved.source_path,
        progress=echo,
    )
    doc: dict[str, Any] = {
        "lock": lock.path.name,
        "lock_sha256": lock.sha256(),
        "packages": lock.packages(),  # what the lock installed over the builder
        "image": derived.tag if derived else None,
        "image_id": derived.id if derived else None,
    }
    if derived is None:
        return image_tag, str(image_obj.id), doc
    return derived.tag, derived.id, doc


def _builder_doc(
    image_tag: str,
    image_obj: Any,
    engine: str,
    limits: ContainerLimits,
    choice: BuilderChoice,
    image: str | None,
    requirements: dict[str, Any] | None,
) -> dict[str, Any]:
    from trt_edge.containers.provenance import container_builder

    chosen = choice.provenance()
    if image is not None:  # --image overrides the choice; record both
        chosen["reason"] = f"--image {image} given (the backend's builder: {choice.image})"
    return container_builder(
        chosen,
        image_tag=image_tag,
        image_id=str(image_obj.id),
        repo_digests=list(image_obj.attrs.get("RepoDigests") or []),
        labels=dict(image_obj.labels or {}),
        engine_version=str(engine),
        limits=limits.doc(),
        requirements=requirements,
    )
