"""The quantization recipe step: `build.quantize` applied with torchao's `quantize_`.

A `RecipeStep` (`trt_edge.pipeline.recipes`): it transforms the eager model before
export, enters the export, lower and validate cache keys (scheme, group size,
torchao's version) and is recorded in `bundle.json` (`quantization`). The configs
are torchao's own, as ExecuTorch's LLM export and optimum-executorch use them:

| scheme | torchao config |
|---|---|
| linear `8da4w` | `Int8DynamicActivationIntxWeightConfig(int4, PerGroup(group_size))` |
| linear `8da8w` | `Int8DynamicActivationIntxWeightConfig(int8, PerAxis(0))` |
| linear `4w`/`8w` | `IntxWeightOnlyConfig(int4 PerGroup / int8 PerAxis(0))` |
| embedding `4w`/`8w` | `IntxWeightOnlyConfig(int4/int8, PerGroup(group_size))` on `nn.Embedding` |

8-bit linear weights are per output channel: XNNPACK's grouped kernels take 4-bit
weights only. Which backend runs which scheme is `trt_edge.manifest.quantization`'s
table; a scheme the chosen backend cannot run is refused here, at its manifest line,
before anything is loaded (the manifest check did the same for the manifest's own
backend; `--backend` may choose another).
"""

from __future__ import annotations

import importlib.metadata
from typing import Any

from trt_edge.manifest.quantization import Quantization, refusals
from trt_edge.manifest.resolved import ResolvedManifest
from trt_edge.pipeline.errors import BadInputError


def _torchao_version() -> str:
    try:
        return importlib.metadata.version("torchao")
    except importlib.metadata.PackageNotFoundError:
        return "absent"


class QuantizeStep:
    """`build.quantize` as a recipe step."""

    name = "quantize"

    def __init__(self, quantization: Quantization, backend: str) -> None:
        self.quantization = quantization
        self.backend = backend

    def key(self) -> Any:
        q = self.quantization
        return {
            "linear": q.linear,
            "group_size": q.group_size,
            "embedding": q.embedding,
            "torchao": _torchao_version(),
        }

    def record(self) -> dict[str, Any]:
        q = self.quantization
        return {
            "quantization": {
                "scheme": q.label,
                "linear": q.linear,
                "group_size": q.group_size,
                "embedding": q.embedding,
                "library": f"torchao {_torchao_version()}",
            }
        }

    def apply(self, module: Any) -> Any:
        """Quantize `module` in place (linears first, then embeddings) and return it."""
        import torch
        from torchao.quantization.granularity import PerAxis, PerGroup
        from torchao.quantization.quant_api import (
            Int8DynamicActivationIntxWeightConfig,
            IntxWeightOnlyConfig,
            quantize_,
        )

        q = self.quantization
        bits: dict[str, Any] = {"4": getattr(torch, "int4"), "8": torch.int8}  # noqa: B009
        if q.linear is not None:
            dtype = bits[q.linear[-2]]
            granularity = PerGroup(q.group_size) if q.linear[-2] == "4" else PerAxis(0)
            config: Any = (
                Int8DynamicActivationIntxWeightConfig(
                    weight_dtype=dtype, weight_granularity=granularity
                )
                if q.linear.startswith("8da")
                else IntxWeightOnlyConfig(weight_dtype=dtype, granularity=granularity)
            )
            with torch.no_grad():
                quantize_(module, config)
        if q.embedding is not None:
            # `padding_idx` only shapes gradients; an embedding call that carries it does not
            # match ExecuTorch's quantized-embedding fusion (which the lowering relies on).
            for child in module.modules():
                if isinstance(child, torch.nn.Embedding):
                    child.padding_idx = None
            config = IntxWeightOnlyConfig(
                weight_dtype=bits[q.embedding[0]], granularity=PerGroup(q.group_size)
            )
            with torch.no_grad():
                quantize_(module, config, filter_fn=lambda m, _: isinstance(m, torch.nn.Embedding))
        return module


def quantize_step(manifest: ResolvedManifest, backend: str) -> QuantizeStep | None:
    """The step `build.quantize` asks for (None without it); refuses what `backend` cannot run."""
    q = manifest.quantize
    if q is None:
        return None
    for name, why in refusals(backend, q.linear, q.embedding):
        raise BadInputError(
            f"{manifest.where('build', 'quantize', name)}: build.quantize.{name}: {why}",
            hint=f"the build lowers with {backend} (build.backend or --backend)",
        )
    return QuantizeStep(q, backend)


class TensorRTPrecisionStep:
    """`build.precision` other than fp32 on TensorRT: nothing to do to the eager model
    (torch_tensorrt takes `enabled_precisions` when lowering); recorded in `bundle.json`
    and in the validate key, so validation holds the bundle to its precision's budget."""

    name = "tensorrt-precision"

    def __init__(self, precision: str) -> None:
        self.precision = precision

    def key(self) -> Any:
        return {"precision": self.precision}

    def record(self) -> dict[str, Any]:
        return {"quantization": {"scheme": self.precision, "precision": self.precision}}

    def apply(self, module: Any) -> Any:
        return module


def tensorrt_precision_step(manifest: ResolvedManifest, backend: str) -> Any:
    if backend != "tensorrt" or manifest.precision == "fp32":
        return None
    return TensorRTPrecisionStep(manifest.precision)
