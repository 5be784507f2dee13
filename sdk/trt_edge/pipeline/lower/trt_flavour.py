"""Which TensorRT builds the engines: regular TensorRT or TensorRT for RTX (docs/tensorrt.md).

The two flavours share one Python API (`Builder`, `OnnxParser`, `IOptimizationProfile`,
`IProgressMonitor`, `ILogger`) and differ where their products differ:

| | regular TensorRT (`tensorrt`) | TensorRT for RTX (`tensorrt_rtx`) |
|---|---|---|
| devices | Jetson, data-centre and workstation GPUs | RTX-class GPUs, SM 7.5–12.1 |
| building | on the target's GPU | anywhere, no GPU (CPU-only ahead-of-time) |
| compute capabilities | the GPU it was built on | chosen at build (`set_compute_capability`) |
| precision | builder flags (weakly typed) | the network's own types (strongly typed) |
| on a device | upstream's ExecuTorch `TensorRTBackend` | no ExecuTorch backend exists upstream |

A flavour is data (this table, `FLAVOURS`); the lowering asks it, never branches on names.
The target says which flavour it runs (`tensorrt` or `tensorrt_rtx` set in the catalog).
"""

from __future__ import annotations

import importlib
import importlib.metadata
from dataclasses import dataclass
from types import ModuleType
from typing import Literal

from trt_edge_runner.bundle_format import RTX_RUNTIME_MISSING

FlavourName = Literal["tensorrt", "tensorrt_rtx"]


@dataclass(frozen=True)
class Flavour:
    """One TensorRT product as the lowering uses it."""

    name: FlavourName
    module: str  # the Python module: `import tensorrt` / `import tensorrt_rtx`
    distribution: str  # the PyPI distribution whose version the engine is tied to
    install: str  # what to install, for the error message
    builds_without_gpu: bool
    sets_compute_capabilities: bool  # engines name their SMs at build
    strongly_typed: bool  # precision comes from the network's types, not builder flags
    # Where a bundle of this flavour runs, for `trt-edge-run` and the docs; None: upstream's
    # ExecuTorch TensorRT backend (`TensorRTBackend`, linking regular TensorRT's nvinfer).
    runtime_missing: str | None

    def load(self) -> ModuleType:
        """The TensorRT module; ImportError/OSError propagate for `unavailable_reason`."""
        return importlib.import_module(self.module)

    def version(self) -> str | None:
        try:
            return importlib.metadata.version(self.distribution)
        except importlib.metadata.PackageNotFoundError:
            return None

    def unavailable_reason(self) -> str | None:
        """None when engines of this flavour can be built in this environment."""
        if self.version() is None:
            return f"{self.module} is not installed ({self.install})"
        try:
            self.load()
        except (ImportError, OSError) as exc:
            return f"import {self.module} failed ({type(exc).__name__}: {exc})"
        for needed in ("onnx", "onnxscript"):
            try:
                importlib.metadata.version(needed)
            except importlib.metadata.PackageNotFoundError:
                return (
                    f"{needed} is not installed (PyTorch's ONNX exporter needs onnx and onnxscript)"
                )
        if not self.builds_without_gpu:
            reason = _no_gpu_reason()
            if reason is not None:
                return f"{self.module} builds engines on the target's GPU, and {reason}"
        return None


def _no_gpu_reason() -> str | None:
    import torch

    if not torch.cuda.is_available():
        return "no CUDA GPU is visible to torch (torch.cuda.is_available() is False)"
    return None


FLAVOURS: dict[FlavourName, Flavour] = {
    "tensorrt": Flavour(
        name="tensorrt",
        module="tensorrt",
        distribution="tensorrt",
        install="TensorRT from NVIDIA's index, as in the x86-trt and jetson-* builder images",
        builds_without_gpu=False,
        sets_compute_capabilities=False,
        strongly_typed=False,
        runtime_missing=None,
    ),
    "tensorrt_rtx": Flavour(
        name="tensorrt_rtx",
        module="tensorrt_rtx",
        distribution="tensorrt_rtx",
        install="pip install tensorrt-rtx==1.7.1.116 onnx onnxscript, or build in x86-rtx",
        builds_without_gpu=True,
        sets_compute_capabilities=True,
        strongly_typed=True,
        runtime_missing=RTX_RUNTIME_MISSING,
    ),
}


def flavour(name: str) -> Flavour:
    return FLAVOURS[name]  # type: ignore[index]
