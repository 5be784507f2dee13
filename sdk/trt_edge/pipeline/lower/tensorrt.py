"""TensorRT through torch_tensorrt ≥ 2.14: one engine per partition, N optimization profiles.

Written against the real API and kept thin: the manifest's profiles become
`torch_tensorrt.Input(profiles=[{min_shape, opt_shape, max_shape}, ...])` per
dynamic input (the list order is the profile index that ships), `dynamo.compile`
builds the engines, and `torch_tensorrt.save(..., output_format="executorch")`
writes the `.pte` (plus `.ptd` files when weights live outside it).

Where torch_tensorrt, TensorRT or a CUDA GPU is missing, `unavailable_reason`
says which, and the build stops with that one message. Nothing here produces
engine bytes of its own.

A Hugging Face causal LM (`model.huggingface`, `trt_edge.llm`) reaches this backend
as the same exported program the CPU backends get: its KV cache is a set of mutable
buffers written by `index_put`, which no TensorRT engine takes. The cache would then
stay in ExecuTorch's planned memory and cross into the engines as inputs on every
call — the per-token copies the recipe exists to avoid on CPU — and whether
torch_tensorrt 2.14 compiles a program with buffer mutations at all is unverified
(no machine here has TensorRT). A known risk, not a tested path.
"""

from __future__ import annotations

import importlib.metadata
import tempfile
from pathlib import Path
from typing import Any

from trt_edge.manifest.resolved import ResolvedManifest
from trt_edge.pipeline.errors import LoweringError
from trt_edge.pipeline.lower import Lowered, LoweringRecipe
from trt_edge.pipeline.plan import ExportPlan, sample_inputs

MIN_TORCH_TENSORRT = (2, 14)  # first release whose Input accepts profiles=[...]


def _version_tuple(text: str) -> tuple[int, ...]:
    parts: list[int] = []
    for piece in text.split("+")[0].split(".")[:2]:
        digits = "".join(ch for ch in piece if ch.isdigit())
        parts.append(int(digits or 0))
    return tuple(parts)


def input_profiles(manifest: ResolvedManifest) -> list[dict[str, Any]]:
    """Per forward() input, the keyword arguments of its `torch_tensorrt.Input`.

    Static inputs get `shape`; dynamic ones get `profiles`, one
    {min_shape, opt_shape, max_shape} per manifest profile in manifest order —
    the order is the profile index the engine ships with. Plain data, so it is
    tested without torch_tensorrt.
    """
    specs: list[dict[str, Any]] = []
    for spec in manifest.inputs:
        if all(isinstance(d, int) for d in spec.shape):
            specs.append({"shape": tuple(int(d) for d in spec.shape), "dtype": spec.dtype})
            continue
        profiles = []
        for profile in manifest.profiles:
            ((lo, hi),) = profile.bounds((spec,))
            opt = spec.dims_for(profile.opt_symbols())
            profiles.append({"min_shape": lo, "opt_shape": opt, "max_shape": hi})
        specs.append({"profiles": profiles, "dtype": spec.dtype})
    return specs


class TensorRTBackend:
    name = "tensorrt"

    def unavailable_reason(self) -> str | None:
        try:
            version = importlib.metadata.version("torch-tensorrt")
        except importlib.metadata.PackageNotFoundError:
            return "torch_tensorrt is not installed (it needs TensorRT and a CUDA GPU)"
        if _version_tuple(version) < MIN_TORCH_TENSORRT:
            return (
                f"torch_tensorrt {version} is installed but multi-profile Input(profiles=...) "
                "needs >= 2.14"
            )
        try:
            import torch_tensorrt  # noqa: F401
        except (ImportError, OSError) as exc:
            return f"import torch_tensorrt failed ({type(exc).__name__}: {exc})"
        import torch

        if not torch.cuda.is_available():
            return "no CUDA GPU is visible to torch (torch.cuda.is_available() is False)"
        return None

    def lower(
        self,
        program: Any,
        manifest: ResolvedManifest,
        plan: ExportPlan,
        recipe: LoweringRecipe | None = None,
    ) -> Lowered:
        """`recipe` (ExecuTorch edge passes) does not apply: TensorRT lowers the program as
        exported."""
        import torch
        import torch_tensorrt

        precisions = {
            "fp32": torch.float32,
            "fp16": torch.float16,
            "bf16": torch.bfloat16,
            # int8/fp8 engines take their scales from quantize/dequantize nodes (NVIDIA
            # ModelOpt calibration) in the program; without them TensorRT keeps those
            # layers in the other enabled precision.
            "int8": torch.int8,
            "fp8": torch.float8_e4m3fn,
        }
        trt_inputs = [
            torch_tensorrt.Input(**{**kw, "dtype": getattr(torch, kw["dtype"])})
            for kw in input_profiles(manifest)
        ]
        example = tuple(
            torch.from_numpy(a).cuda()
            for a in sample_inputs(manifest.inputs, plan.example_symbols, seed=0)
        )
        try:
            compiled = torch_tensorrt.dynamo.compile(
                program,
                arg_inputs=trt_inputs,
                enabled_precisions={torch.float32, precisions[manifest.precision]},
                min_block_size=1,
            )
            with tempfile.TemporaryDirectory(prefix="trt-edge-trt-") as tmp:
                pte_path = Path(tmp) / "model.pte"
                torch_tensorrt.save(
                    compiled,
                    str(pte_path),
                    output_format="executorch",
                    arg_inputs=example,
                    retrace=False,
                )
                ptd = {p.name: p.read_bytes() for p in sorted(Path(tmp).glob("*.ptd"))}
                return Lowered(self.name, pte_path.read_bytes(), ptd)
        except Exception as exc:
            raise LoweringError(f"TensorRT lowering failed: {type(exc).__name__}: {exc}") from exc
