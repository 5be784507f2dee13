"""The decisions of a container build, without an engine: the mode a flag picks, the setup a
manifest resolves to, the container plan built from them, and how an exit is reported.

`test_build_runner.py` runs the same path against a real engine; these pin each decision
alone, so a change to one shows here in milliseconds."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest
from trt_edge.containers import catalog
from trt_edge.containers.build_mode import (
    MODE_ENV,
    BuildMode,
    ContainerSetup,
    choose_mode,
    resolve_setup,
)
from trt_edge.containers.build_runner import ContainerExit, exit_error
from trt_edge.containers.builder_choice import BuilderChoice, choose_builder
from trt_edge.containers.container_plan import (
    CONTAINER_LABEL,
    BuildFolders,
    ContainerLimits,
    ContainerPlan,
    Mount,
    RunImage,
    plan_container,
)
from trt_edge.containers.errors import (
    ContainerBuildError,
    ContainerResourceError,
    ContainerTimeoutError,
)
from trt_edge.containers.requirements_lock import RequirementsLockError
from trt_edge.manifest import load_manifest
from trt_edge.manifest.resolved import HuggingFaceModel, ResolvedManifest
from trt_edge.pipeline.environment import ENVIRONMENT_ENV
from trt_edge.pipeline.run import BuildOptions
from trt_edge.targets import load_catalog

MODEL = Path(__file__).parent / "models" / "linear"
LIMITS = ContainerLimits(memory="2g", cpus=1.5, pids=64, timeout_s=30.0)
IMAGE = RunImage(
    tag="trt-edge/cpu:abc",
    id="sha256:run",
    builder_tag="trt-edge/cpu:abc",
    builder_id="sha256:builder",
    builder_labels={catalog.LABEL_LOCK: "builderlock"},
)


@pytest.fixture
def resolved(tmp_path: Path) -> ResolvedManifest:
    shutil.copytree(MODEL, tmp_path / "linear")
    manifest = load_manifest(tmp_path / "linear" / "manifest.yaml").manifest
    assert manifest is not None
    return manifest


def folders_of(resolved: ResolvedManifest, tmp_path: Path) -> BuildFolders:
    return BuildFolders(resolved.source_path, tmp_path / "out" / ".staging", tmp_path / "cache")


def setup_of(resolved: ResolvedManifest, builder: BuilderChoice | None = None) -> ContainerSetup:
    targets = load_catalog()
    target = targets.get("cpu-x86_64")
    builder = builder or choose_builder(target, "xnnpack", False, targets)
    return ContainerSetup(resolved, target, builder, lock=None)


def plan_of(
    resolved: ResolvedManifest,
    tmp_path: Path,
    options: BuildOptions | None = None,
    setup: ContainerSetup | None = None,
    host_environment: dict[str, str] | None = None,
) -> ContainerPlan:
    return plan_container(
        folders_of(resolved, tmp_path),
        resolved,
        options or BuildOptions(out_dir=tmp_path / "out"),
        setup or setup_of(resolved),
        IMAGE,
        LIMITS,
        user="1000:1000",
        host_environment=host_environment or {},
    )


@pytest.mark.parametrize(
    ("flag", "env", "expected"),
    [
        ("local", None, BuildMode("local", "--local")),
        ("container", None, BuildMode("container", "--container")),
        ("local", "container", BuildMode("local", "--local")),  # a flag beats the variable
        (None, "local", BuildMode("local", f"{MODE_ENV}=local")),
        (None, "container", BuildMode("container", f"{MODE_ENV}=container")),
    ],
)
def test_a_flag_or_the_variable_decides_the_mode_without_resolving_anything(
    flag: str | None, env: str | None, expected: BuildMode, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nothing is looked up (no engine, no target): a build asked for by flag resolves its
    own setup and reports what is wrong as an error, not as a reason to build locally."""
    if env is None:
        monkeypatch.delenv(MODE_ENV, raising=False)
    else:
        monkeypatch.setenv(MODE_ENV, env)
    assert choose_mode("no-such-target", flag) == expected


def test_an_unknown_target_without_a_flag_builds_locally_and_says_why(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(MODE_ENV, raising=False)
    mode = choose_mode("no-such-target", None)
    assert (mode.kind, mode.setup) == ("local", None)
    assert "no-such-target" in mode.reason and mode.reason.endswith("; building locally")


def test_setup_takes_the_manifests_first_target_and_backend(resolved: ResolvedManifest) -> None:
    setup = resolve_setup(resolved, None, None)
    assert setup.manifest is resolved
    assert (setup.target.id, setup.builder.image, setup.builder.backend) == (
        "cpu-x86_64",
        "cpu",
        "xnnpack",
    )
    assert (setup.lock, setup.image) == (None, None)


def test_setup_refuses_requirements_without_a_lock_before_any_engine(
    resolved: ResolvedManifest,
) -> None:
    wanting = dataclasses.replace(resolved, requirements=("six==1.16.0",))
    with pytest.raises(RequirementsLockError) as info:
        resolve_setup(wanting, None, None)
    assert "there is no" in str(info.value) and "cpu.lock" in str(info.value)
    assert info.value.hint is not None and "trt-edge lock" in info.value.hint


def test_setup_refuses_an_unknown_target_as_bad_input(resolved: ResolvedManifest) -> None:
    with pytest.raises(ContainerBuildError) as info:
        resolve_setup(resolved, "no-such-target", None)
    assert info.value.exit_code == 2


def test_plan_mounts_sources_read_only_and_outputs_writable_at_their_host_paths(
    resolved: ResolvedManifest, tmp_path: Path
) -> None:
    plan = plan_of(resolved, tmp_path)
    folders = folders_of(resolved, tmp_path)
    assert plan.mounts == (
        Mount(resolved.source_path.parent, read_only=True),
        Mount(folders.staging, read_only=False),
        Mount(folders.cache, read_only=False),
    )
    assert plan.working_dir == resolved.source_path.parent
    assert plan.docker_arguments()["volumes"][str(folders.staging)] == {
        "bind": str(folders.staging),
        "mode": "rw",
    }


def test_plan_mounts_a_hugging_face_folder_outside_the_manifests_folder(
    resolved: ResolvedManifest, tmp_path: Path
) -> None:
    weights = tmp_path / "weights"
    model = HuggingFaceModel(weights, 64, "Gemma3ForCausalLM", "gemma3_text", 256, True)
    outside = plan_of(dataclasses.replace(resolved, huggingface=model), tmp_path)
    assert Mount(weights, read_only=True) in outside.mounts
    inside = dataclasses.replace(model, folder=resolved.source_path.parent / "weights")
    plan = plan_of(dataclasses.replace(resolved, huggingface=inside), tmp_path)
    assert Mount(inside.folder, read_only=True) not in plan.mounts


def test_plan_runs_the_local_build_with_the_hosts_options(
    resolved: ResolvedManifest, tmp_path: Path
) -> None:
    options = BuildOptions(
        out_dir=tmp_path / "out",
        backend="portable",
        use_cache=False,
        source_date_epoch=7,
        memory_headroom_mib=512,
    )
    plan = plan_of(resolved, tmp_path, options)
    folders = folders_of(resolved, tmp_path)
    assert plan.command == (
        *("trt-edge", "build", str(resolved.source_path), "--local"),
        *("--out", str(folders.staging), "--cache-dir", str(folders.cache)),
        *("--log-format", "json", "--target", "cpu-x86_64", "--events", "-"),
        *("--backend", "portable", "--no-cache", "--source-date-epoch", "7"),
        *("--memory-headroom-mib", "512"),
    )
    assert plan.image == IMAGE.tag


def test_plan_environment_names_the_image_and_passes_only_source_date_epoch(
    resolved: ResolvedManifest, tmp_path: Path
) -> None:
    plan = plan_of(resolved, tmp_path, host_environment={"SOURCE_DATE_EPOCH": "9", "HOME": "/x"})
    assert plan.environment["HOME"] == "/tmp"
    assert plan.environment["SOURCE_DATE_EPOCH"] == "9"
    assert plan.environment["TRT_EDGE_CACHE"] == str(tmp_path / "cache")
    assert json.loads(plan.environment[ENVIRONMENT_ENV]) == {
        "image_id": "sha256:run",
        "builder_image_id": "sha256:builder",
        "builder_lock_sha256": "builderlock",
        "requirements_lock_sha256": None,
    }
    assert "SOURCE_DATE_EPOCH" not in plan_of(resolved, tmp_path).environment


def test_plan_limits_the_container_and_cuts_its_network(
    resolved: ResolvedManifest, tmp_path: Path
) -> None:
    arguments = plan_of(resolved, tmp_path).docker_arguments()
    assert arguments["network_mode"] == "none"
    assert (arguments["mem_limit"], arguments["memswap_limit"]) == ("2g", "2g")  # no swap
    assert (arguments["nano_cpus"], arguments["pids_limit"]) == (1_500_000_000, 64)
    assert (arguments["user"], arguments["entrypoint"]) == ("1000:1000", [])
    assert arguments["labels"] == {CONTAINER_LABEL: "1"}


def test_plan_gives_gpus_only_to_a_build_that_needs_them(
    resolved: ResolvedManifest, tmp_path: Path
) -> None:
    assert not plan_of(resolved, tmp_path).gpus
    gpu = BuilderChoice("x86-trt", "tensorrt", needs_gpu=True, reason="TensorRT")
    assert plan_of(resolved, tmp_path, setup=setup_of(resolved, gpu)).gpus


MANIFEST = Path("/work/project/manifest.yaml")


def classify(ended: ContainerExit, output: str = "the tail") -> ContainerBuildError | None:
    return exit_error(ended, output, manifest=MANIFEST, image="trt-edge/cpu:abc", limits=LIMITS)


def test_exit_zero_is_success() -> None:
    assert classify(ContainerExit(0)) is None


@pytest.mark.parametrize("status", [1, 2])
def test_the_builds_own_exit_code_passes_through_with_its_error(status: int) -> None:
    error = classify(ContainerExit(status), "trt-edge build: error: nope")
    assert type(error) is ContainerBuildError
    assert error.exit_code == status
    assert str(error) == (
        f"the build failed inside the container (trt-edge/cpu:abc, exit {status}):\n"
        "trt-edge build: error: nope"
    )
    assert str(classify(ContainerExit(status), "")).endswith(":\n(no output)")


def test_a_kill_by_signal_names_the_signal_and_the_last_output() -> None:
    error = classify(ContainerExit(137))
    assert isinstance(error, ContainerResourceError)
    assert str(error) == (
        f"the container build of {MANIFEST} ended with status 137 (killed by signal 9); "
        "last output:\nthe tail"
    )
    assert "signal" not in str(classify(ContainerExit(3)))


def test_running_out_of_memory_names_the_limit_and_its_variable() -> None:
    error = classify(ContainerExit(137, oom_killed=True))
    assert isinstance(error, ContainerResourceError)
    assert "exceeded its memory limit (2g)" in str(error)
    assert "TRT_EDGE_CONTAINER_MEMORY" in str(error)


def test_a_timeout_is_reported_as_such_whatever_the_kill_left_behind() -> None:
    """The host's kill ends the container with 137 and may look like an OOM: the timeout
    is what happened."""
    error = classify(ContainerExit(137, oom_killed=True, timed_out=True))
    assert isinstance(error, ContainerTimeoutError)
    assert "ran longer than 30 s and was killed" in str(error)
    assert "TRT_EDGE_CONTAINER_TIMEOUT" in str(error)
