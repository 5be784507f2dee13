"""Which builder image a containerized build runs in: decided by the backend that will run.

A CPU backend's `.pte` (xnnpack, portable) does not depend on the CPU it is built on, so
the `cpu` builder builds it for every target, a Jetson's included; only a TensorRT build
needs the target's own GPU builder (TensorRT builds an engine on the GPU it will run on),
and that is refused, clearly, where the host has no NVIDIA GPU. What each backend needs
is data (the target catalog's `backends`); `auto` resolves as the pipeline's backend
choice does: TensorRT when the target has it and the host has a GPU, else XNNPACK.

Pure: the caller says whether the host has GPUs, so every case is tested without one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from trt_edge.containers.errors import ContainerBuildError
from trt_edge.targets import Target, TargetCatalog

AUTO = "auto"
AUTO_TENSORRT = "tensorrt"
AUTO_CPU = "xnnpack"  # what the pipeline's `auto` falls back to without TensorRT


@dataclass(frozen=True)
class BuilderChoice:
    """The builder image for one build, the backend it was chosen for, and why."""

    image: str  # folder name under images/
    backend: str  # the backend that will run (auto resolved)
    needs_gpu: bool  # the container gets the host's GPUs
    reason: str

    def provenance(self) -> dict[str, Any]:
        """What `bundle.json` → `provenance.builder` records about the choice."""
        return {"image_name": self.image, "backend": self.backend, "reason": self.reason}


def resolve_backend(requested: str, target: Target, host_has_gpu: bool) -> tuple[str, str]:
    """(backend, why) for `requested`, resolving `auto` as the pipeline will inside."""
    if requested != AUTO:
        return requested, f"backend {requested} requested"
    if target.requires_tensorrt and target.builds_without_gpu:
        return AUTO_TENSORRT, f"auto: {target.id} runs TensorRT-RTX, which builds without a GPU"
    if target.requires_tensorrt and host_has_gpu:
        return AUTO_TENSORRT, f"auto: {target.id} runs TensorRT and this host has a GPU"
    if target.requires_tensorrt:
        return AUTO_CPU, f"auto: {target.id} runs TensorRT but this host has no NVIDIA GPU"
    return AUTO_CPU, f"auto: {target.id} has no TensorRT"


def choose_builder(
    target: Target, requested_backend: str, host_has_gpu: bool, catalog: TargetCatalog
) -> BuilderChoice:
    """The builder image for building `target` with `requested_backend`; refuses a TensorRT
    build that cannot happen here (a target without TensorRT, a host without a GPU)."""
    backend, why = resolve_backend(requested_backend, target, host_has_gpu)
    needs = catalog.backend(backend)
    needs_gpu = needs.needs_gpu and not target.builds_without_gpu
    if needs.needs_gpu and not target.requires_tensorrt:
        raise ContainerBuildError(
            f"backend {backend} builds TensorRT engines, and target {target.id!r} has no "
            "TensorRT (it is a CPU target); pick a Jetson or x86 GPU target, or build with "
            "--backend xnnpack",
            exit_code=2,
        )
    if needs_gpu and not host_has_gpu:
        raise ContainerBuildError(
            f"target {target.id!r} with backend {backend} needs TensorRT, which builds engines "
            "on a GPU; this host has no NVIDIA GPU (/dev/nvidia*). Build on a GPU host, or "
            f"build a CPU bundle for {target.id} with --backend xnnpack (in the cpu builder)",
            exit_code=2,
        )
    image = needs.builder_for(target)
    if needs_gpu:
        because = f"{why}: TensorRT engines are built on the target's GPU stack"
    elif needs.needs_gpu:
        because = f"{why}: TensorRT-RTX builds the target's engines without a GPU"
    else:
        because = f"{why}: a .pte lowered with {backend} does not depend on the CPU it is built on"
    return BuilderChoice(image, backend, needs_gpu, f"{because}, so the {image} builder")
