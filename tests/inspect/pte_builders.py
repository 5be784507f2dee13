"""Real `.pte` files for the inspect tests, made with torch.export + ExecuTorch.

`synthesize_tensorrt_pte` makes a SYNTHETIC file: a real XNNPACK-lowered program whose
delegate ids and blobs are rewritten with ExecuTorch's own (private) serializer into
"TensorRTBackend" delegates carrying TR01 blobs around placeholder engine bytes. Lowering
to TensorRT is impossible here (no TensorRT); such files test the readers only, they
cannot run.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Unpack

from trt_edge_runner.bundle_format import PhaseTarget, TensorSpec

from tests.helpers.bundles import BundleOptions, ProfileRow, write_bundle

if TYPE_CHECKING:
    import torch
    from torch.export import ExportedProgram

# What a forward(ids) of `TinyDecoder.module()` takes and gives, and the LLM-like table
# its bundles carry (forward is exported over seq 1..128).
DECODER_INPUTS = (TensorSpec(name="ids", dtype="int64", shape=(1, "seq"), values=(0, 64)),)
DECODER_OUTPUTS = (TensorSpec(name="logits", dtype="float32", shape=(1, "seq", 16)),)
DECODER_PROFILES: tuple[ProfileRow, ...] = (("decode", 1, 1, 1), ("prefill", 2, 32, 128))
DECODER_PHASES: dict[str, PhaseTarget] = {"decode": 0, "prefill": 1}


class TinyDecoder:
    """Factory of a tiny embedding → linear → relu module (weights sized by `vocab`/`width`)."""

    @staticmethod
    def module(vocab: int = 64, width: int = 16) -> torch.nn.Module:
        import torch

        class M(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.emb = torch.nn.Embedding(vocab, width)
                self.lin = torch.nn.Linear(width, width)

            def forward(self, ids: torch.Tensor) -> torch.Tensor:
                return torch.relu(self.lin(self.emb(ids)))

        torch.manual_seed(0)
        return M().eval()


def export_methods(
    module: torch.nn.Module, methods: dict[str, tuple[int, int]], *, example_len: int = 4
) -> dict[str, ExportedProgram]:
    """One ExportedProgram per method; `methods[name] = (min_seq, max_seq)` (static if equal)."""
    import torch
    from torch.export import Dim, export

    out = {}
    for name, (lo, hi) in methods.items():
        length = min(max(example_len, lo), hi)
        example = (torch.zeros(1, length, dtype=torch.long),)
        dynamic = None if lo == hi else {"ids": {1: Dim(f"seq_{name}", min=lo, max=hi)}}
        out[name] = export(module, example, dynamic_shapes=dynamic)
    return out


def write_pte(programs: dict[str, ExportedProgram], path: Path, backend: str) -> Path:
    from executorch.exir import to_edge_transform_and_lower

    partitioners: list[Any] = []
    if backend == "xnnpack":
        from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner

        partitioners = [XnnpackPartitioner()]
    edge = to_edge_transform_and_lower(programs, partitioner=partitioners)
    et = edge.to_executorch()
    path.write_bytes(et.buffer)
    return path


def synthesize_tensorrt_pte(
    source: Path, dest: Path, blobs: Sequence[bytes], *, inline: bool = False
) -> Path:
    """Rewrite every delegate of `source` as a TensorRTBackend delegate with `blobs[i]`.

    Uses ExecuTorch's own deserializer/serializer so the result is a well-formed `.pte`.
    SYNTHETIC: the blobs carry placeholder engine bytes; the program cannot execute.
    """
    from executorch.exir._serialize._program import deserialize_pte_binary, serialize_pte_binary

    pte = deserialize_pte_binary(source.read_bytes())
    program = pte.program
    k = 0
    for plan in program.execution_plan:
        for delegate in plan.delegates:
            delegate.id = "TensorRTBackend"
            program.backend_delegate_data[delegate.processed.index].data = blobs[k % len(blobs)]
            k += 1
    data = serialize_pte_binary(pte, extract_delegate_segments=not inline)
    dest.write_bytes(bytes(data))
    return dest


def decoder_bundle(out: Path, pte: Path, **options: Unpack[BundleOptions]) -> Path:
    """A bundle around a `TinyDecoder` program with its LLM-like table, as a build writes it
    (with its validation report), version 1.0.0 unless `options` say otherwise."""
    options.setdefault("version", "1.0.0")
    options.setdefault("report", True)
    options.setdefault("inputs", DECODER_INPUTS)
    options.setdefault("outputs", DECODER_OUTPUTS)
    return write_bundle(out, pte, DECODER_PROFILES, DECODER_PHASES, **options)
