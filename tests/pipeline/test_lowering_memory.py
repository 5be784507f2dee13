"""Lowering shares weights instead of copying them, and the bundle does not change.

`trt_edge.pipeline.lower.executorch_cpu` lowers with two of ExecuTorch's copies of the
weights turned into shared references (XNNPACK's preprocess copy of each partition, and
the second placeholder a tied parameter gets); at Qwen3-0.6B's shape that took the
lowering's peak from 9.5 to under 7 GiB. A small tied model (an embedding whose table is
also the head's weight, as `tie_word_embeddings` makes it) is lowered through
`lower_files` and through ExecuTorch's own calls with the same configuration: the
`.pte` and `.ptd` bytes are identical, the copies really are shared while lowering, and
ExecuTorch is left as it was found.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
import torch

pytest.importorskip("executorch")

VOCAB, HIDDEN = 64, 32
TIED = "head.weight"  # torch.export names the tied table after the head


class TiedHead(torch.nn.Module):
    """An embedding table that is also the output head's weight (read by two operators:
    the gather stays outside XNNPACK, the linear goes into it)."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = torch.nn.Embedding(VOCAB, HIDDEN)
        self.mix = torch.nn.Linear(HIDDEN, HIDDEN)
        self.head = torch.nn.Linear(HIDDEN, VOCAB, bias=False)
        self.head.weight = self.embed.weight

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = self.head(torch.relu(self.mix(self.embed(ids))))
        return out


def tied_program() -> Any:
    torch.manual_seed(0)
    return torch.export.export(TiedHead().eval(), (torch.tensor([[1, 2, 3]]),))


def lower_as_executorch_does(program: Any) -> tuple[bytes, dict[str, bytes]]:
    """ExecuTorch's own calls, its default copies included, with the configuration
    `lower_files` is given below."""
    import tempfile
    from pathlib import Path

    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from executorch.exir import ExecutorchBackendConfig, to_edge_transform_and_lower
    from trt_edge.pipeline.lower.shared_constants import tag_delegate_constants

    edge = to_edge_transform_and_lower(
        program, partitioner=[XnnpackPartitioner()], transform_passes=[tag_delegate_constants]
    )
    et = edge.to_executorch(ExecutorchBackendConfig(external_constants=True))
    with tempfile.TemporaryDirectory() as scratch:
        et.write_tensor_data_to_file(scratch)
        data = {p.name: p.read_bytes() for p in Path(scratch).glob("*.ptd")}
    return et.buffer, data


def test_shared_copies_lower_to_the_same_bytes_as_executorch_alone() -> None:
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from trt_edge.pipeline.lower.executorch_cpu import _with_one_copy_of_constants, lower_files
    from trt_edge.pipeline.lower.shared_constants import shared_constants

    program = tied_program()
    assert shared_constants(program) == [TIED]
    recipe = _with_one_copy_of_constants(None)
    pte, data = lower_files(tied_program(), [XnnpackPartitioner()], "xnnpack", recipe)
    want_pte, want_data = lower_as_executorch_does(program)
    assert pte == want_pte
    assert data == want_data
    assert list(data) == ["_default_external_constant.ptd"]


def test_the_preprocess_copy_shares_tensors_but_not_the_graph() -> None:
    from executorch.backends.xnnpack.xnnpack_preprocess import XnnpackBackend
    from trt_edge.pipeline.lower.executorch_cpu import _preprocess_shares_weights

    program = tied_program()
    with _preprocess_shares_weights():
        copied = XnnpackBackend.copy_exported_program_for_preprocess(program, [])
    for name, tensor in program.state_dict.items():
        assert copied.state_dict[name] is tensor, name
    assert copied.state_dict is not program.state_dict
    assert copied.graph is not program.graph
    # Outside the lowering, XNNPACK deep-copies as ExecuTorch made it do.
    assert "copy_exported_program_for_preprocess" not in vars(XnnpackBackend)
    again = XnnpackBackend.copy_exported_program_for_preprocess(program, [])
    assert again.state_dict[TIED] is not program.state_dict[TIED]


def test_a_duplicated_parameter_shares_its_tensor_and_buffers_are_still_copied() -> None:
    from executorch.exir.backend.canonical_partitioners import duplicate_constant_node_pass
    from executorch.exir.backend.canonical_partitioners.duplicate_constant_node_pass import (
        duplicate_constant_node,
    )
    from trt_edge.pipeline.lower.executorch_cpu import _duplicates_share_parameters

    def duplicated(share: bool) -> tuple[Any, Any]:
        program = tied_program()
        parameters = program.graph_signature.inputs_to_parameters
        node = next(n for n, target in parameters.items() if target == TIED)
        if share:
            with _duplicates_share_parameters():
                (name,) = duplicate_constant_node(program, node)
        else:
            (name,) = duplicate_constant_node(program, node)
        return program.state_dict[name], program.state_dict[TIED]

    shared, table = duplicated(share=True)
    assert shared is table
    copied, table = duplicated(share=False)
    assert copied is not table and torch.equal(copied, table)
    assert duplicate_constant_node_pass.copy is copy
    # What is not a parameter keeps its deep copy.
    buffer = torch.zeros(3)
    with _duplicates_share_parameters():
        assert duplicate_constant_node_pass.copy.deepcopy(buffer) is not buffer
