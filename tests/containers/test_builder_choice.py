"""Which builder image a build runs in: the backend that will run decides, for every target."""

from __future__ import annotations

import pytest
from trt_edge.containers.builder_choice import choose_builder
from trt_edge.containers.errors import ContainerBuildError
from trt_edge.targets import load_catalog

CATALOG = load_catalog()
CPU_BACKENDS = ("xnnpack", "portable")


@pytest.mark.parametrize("target_id", CATALOG.ids())
@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("gpu", [False, True])
def test_cpu_backends_build_in_the_cpu_builder_for_every_target(
    target_id: str, backend: str, gpu: bool
) -> None:
    choice = choose_builder(CATALOG.get(target_id), backend, gpu, CATALOG)
    assert (choice.image, choice.backend, choice.needs_gpu) == ("cpu", backend, False)
    assert (
        f"a .pte lowered with {backend} does not depend on the CPU it is built on" in choice.reason
    )


GPU_BUILT = [t.id for t in CATALOG if t.requires_tensorrt and not t.builds_without_gpu]
RTX = [t.id for t in CATALOG if t.builds_without_gpu]


@pytest.mark.parametrize("target_id", GPU_BUILT)
def test_tensorrt_builds_in_the_targets_gpu_builder_on_a_gpu_host(target_id: str) -> None:
    target = CATALOG.get(target_id)
    choice = choose_builder(target, "tensorrt", True, CATALOG)
    assert (choice.image, choice.needs_gpu) == (target.builder_image, True)
    assert choice.image != "cpu"
    assert "TensorRT engines are built on the target's GPU stack" in choice.reason


@pytest.mark.parametrize("gpu", [False, True])
@pytest.mark.parametrize("target_id", RTX)
def test_tensorrt_rtx_builds_in_the_rtx_builder_with_or_without_a_gpu(
    target_id: str, gpu: bool
) -> None:
    assert RTX, "the catalog has TensorRT-RTX targets"
    choice = choose_builder(CATALOG.get(target_id), "tensorrt", gpu, CATALOG)
    assert (choice.image, choice.needs_gpu) == ("x86-rtx", False)
    assert "TensorRT-RTX builds the target's engines without a GPU" in choice.reason


def test_tensorrt_without_a_gpu_is_refused_naming_the_way_out() -> None:
    with pytest.raises(ContainerBuildError) as info:
        choose_builder(CATALOG.get("jetson-orin-nano-jp6"), "tensorrt", False, CATALOG)
    message = str(info.value)
    assert info.value.exit_code == 2
    assert "needs TensorRT" in message and "no NVIDIA GPU" in message
    assert "--backend xnnpack" in message


def test_tensorrt_for_a_cpu_target_is_refused() -> None:
    with pytest.raises(ContainerBuildError) as info:
        choose_builder(CATALOG.get("cpu-aarch64"), "tensorrt", True, CATALOG)
    assert info.value.exit_code == 2
    assert "'cpu-aarch64' has no TensorRT" in str(info.value)


@pytest.mark.parametrize(
    ("target_id", "gpu", "image", "backend"),
    [
        ("jetson-orin-nano-jp6", False, "cpu", "xnnpack"),
        ("jetson-orin-nano-jp6", True, "jetson-jp6", "tensorrt"),
        ("x86-ada", False, "cpu", "xnnpack"),
        ("x86-ada", True, "x86-trt", "tensorrt"),
        ("cpu-x86_64", True, "cpu", "xnnpack"),
        ("x86-rtx", False, "x86-rtx", "tensorrt"),
    ],
)
def test_auto_resolves_as_the_pipeline_will(
    target_id: str, gpu: bool, image: str, backend: str
) -> None:
    """The pipeline's auto takes TensorRT where it can build, else XNNPACK."""
    choice = choose_builder(CATALOG.get(target_id), "auto", gpu, CATALOG)
    assert (choice.image, choice.backend) == (image, backend)
    assert choice.reason.startswith("auto: ")


def test_the_choice_is_data_every_pipeline_backend_is_in_the_catalog() -> None:
    from trt_edge.pipeline.lower import BACKEND_NAMES

    assert {b.name for b in CATALOG.backends} == set(BACKEND_NAMES)
