"""The recipe's half of the `export` stage: torch.export of the wrapper over `seq`.

Non-strict export (no dynamo): the caches are buffers read through the module, so
they come out as mutated buffers of the program. The example sits at the top of
the export domain like every other model's (see `plan._example_value`); positions
are `0..seq-1`, a real prefill. With `attention: filled` the window input sits at the
top of its domain too (the whole cache), `0..window-1`. With `runtime.slots` the example
is a batch at the top of its domain too, row b in slot b.
"""

from __future__ import annotations

from typing import Any

from trt_edge.manifest.huggingface import WINDOW
from trt_edge.manifest.resolved import ResolvedManifest
from trt_edge.pipeline.errors import ExportError
from trt_edge.pipeline.export import example_args as sampled
from trt_edge.pipeline.export import explain_export_failure
from trt_edge.pipeline.plan import ExportPlan


def example_args(manifest: ResolvedManifest, plan: ExportPlan) -> tuple[Any, ...]:
    import torch

    input_ids = sampled(manifest.inputs, plan)[0]
    batch, seq = int(input_ids.shape[0]), int(input_ids.shape[1])
    positions = torch.arange(seq, dtype=torch.int64)
    args: tuple[Any, ...] = (input_ids, positions)
    if manifest.huggingface is not None and manifest.huggingface.slots > 1:
        # Slots: each row a conversation in its own slot, all at positions 0..seq-1.
        slots = torch.arange(batch, dtype=torch.int64)
        args = (input_ids, positions.repeat(batch, 1), slots)
    if WINDOW in plan.example_symbols:
        args += (torch.arange(plan.example_symbols[WINDOW], dtype=torch.int64),)
    return args


def export_causal_lm(manifest: ResolvedManifest, plan: ExportPlan, wrapper: Any) -> Any:
    """The ExportedProgram of `StaticCacheLM`; a failure is an `ExportError` in manifest terms."""
    import torch

    from trt_edge.llm.rewrites import rotate_half_as_matmul

    args = example_args(manifest, plan)
    try:
        with torch.no_grad(), rotate_half_as_matmul(wrapper.model, wrapper):
            return torch.export.export(
                wrapper, args, dynamic_shapes=plan.dynamic_shapes(manifest.inputs), strict=False
            )
    except Exception as exc:
        raise ExportError(explain_export_failure(manifest, plan, exc)) from exc
