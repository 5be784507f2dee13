"""ExecuTorch's CPU backends: `xnnpack` (the default without TensorRT) and `portable`.

Both take the same road — edge dialect, an optional partitioner, `.pte` bytes —
and differ only in the partitioner: XNNPACK's delegates what it can to its
kernels; `portable` delegates nothing, which is slowest but runs every operator
(the way to tell whether an operator is what breaks XNNPACK lowering). The pipeline
recipe may add passes and configs (a Hugging Face causal LM's: `trt_edge.llm.lowering`);
a plain model lowers with ExecuTorch's defaults. A program whose parameter is read both by
an XNNPACK delegate and outside it (a tied embedding) keeps its weights in one `.ptd` file,
each stored once (`shared_constants`).
"""

from __future__ import annotations

import copy
import dataclasses
import importlib.util
import tempfile
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from trt_edge.manifest.resolved import ResolvedManifest
from trt_edge.pipeline.errors import LoweringError
from trt_edge.pipeline.lower.backend import LoweredProgram, LoweringRecipe, require_fp32
from trt_edge.pipeline.lower.shared_constants import shared_constants, tag_delegate_constants
from trt_edge.pipeline.peak_memory import release_memory
from trt_edge.pipeline.plan import ExportPlan


def lower_with(
    program: Any, partitioners: list[Any], backend: str, recipe: LoweringRecipe | None = None
) -> bytes:
    """`.pte` bytes of `program`; `recipe` adds passes and configs (the causal-LM recipe)."""
    return lower_files(program, partitioners, backend, recipe)[0]


def lower_files(
    program: Any, partitioners: list[Any], backend: str, recipe: LoweringRecipe | None = None
) -> tuple[bytes, dict[str, bytes]]:
    """The `.pte` bytes of `program` and its external data files (`.ptd`, by file name; none
    unless the recipe's config puts constants outside the program)."""
    from executorch.exir import to_edge_transform_and_lower

    edge_kwargs: dict[str, Any] = {}
    if recipe is not None and recipe.transform_passes:
        edge_kwargs["transform_passes"] = recipe.transform_passes
    if recipe is not None and recipe.compile_config is not None:
        edge_kwargs["compile_config"] = recipe.compile_config
    backend_config = recipe.backend_config if recipe is not None else None
    try:
        with _preprocess_shares_weights(), _duplicates_share_parameters():
            edge = to_edge_transform_and_lower(program, partitioner=partitioners, **edge_kwargs)
        # XNNPACK's partitioner keeps the graph's source partitions (its linear config's
        # `src_partitions`), and through their nodes the lowered graph with every
        # delegate's serialized weights: a whole copy of the weights (2.2 GiB at
        # Qwen3-0.6B's shape) kept alive under the `.ptd` read-back for as long as this
        # frame held the list. The backend passes a list of its own; dropped here.
        del partitioners
        executorch_program = (
            edge.to_executorch(config=backend_config)
            if backend_config is not None
            else edge.to_executorch()
        )
        del edge
        pte = executorch_program.buffer
        with tempfile.TemporaryDirectory(prefix="trt-edge-ptd-") as scratch:
            # Written from ExecuTorch's pieces, read back once the program (its own copy of
            # the weights) is gone: never two joined copies of the data at once.
            executorch_program.write_tensor_data_to_file(scratch)
            del executorch_program
            # The serialized weights are freed by now, but glibc keeps their pages (and
            # torch's caches reach the lowered graph) unless told: read back on top of
            # them, the `.ptd` was the lowering's peak (7.9 GiB at Qwen3-0.6B's shape).
            forget_lowered_graphs()
            release_memory()
            data = {p.name: p.read_bytes() for p in sorted(Path(scratch).glob("*.ptd"))}
    except Exception as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        raise LoweringError(
            f"lowering with the {backend} backend failed: {type(exc).__name__}: {first}",
            hint="try --backend portable (no delegation) to see whether an operator is the cause",
        ) from exc
    finally:
        forget_lowered_graphs()
    return pte, data


@contextmanager
def _preprocess_shares_weights() -> Iterator[None]:
    """While lowering, XNNPACK's preprocess gets a copy of each partition whose graph and
    dicts are its own but whose weight tensors are the program's.

    ExecuTorch hands every backend `copy_exported_program_for_preprocess(partition)`, by
    default a `copy.deepcopy` with every weight, made "in case backends change graph
    inside preprocess". XNNPACK's preprocess rewrites the graph (its passes replace
    `state_dict` entries, they never write into a tensor) and reads each weight once to
    serialize it, so the copied weights are pure overhead: measured at Qwen3-0.6B's shape
    they were a whole extra copy of the model (2.2 GiB) alive at the lowering's peak.
    ExecuTorch's own CUDA and OpenVINO backends override the same hook the same way
    (a deepcopy whose memo maps each tensor to itself); XNNPACK 1.5.1 does not, and its
    class refuses subclasses, so the hook is set on it for the duration of the lowering
    and removed after. Where the installed XNNPACK defines the hook itself, it is left
    alone. The bundle is byte-identical either way (`tests/pipeline/test_lowering_memory.py`)."""
    try:
        from executorch.backends.xnnpack.xnnpack_preprocess import XnnpackBackend
    except ImportError:
        yield
        return
    name = "copy_exported_program_for_preprocess"
    if name in vars(XnnpackBackend):
        yield
        return
    setattr(XnnpackBackend, name, classmethod(_copy_sharing_weights))
    try:
        yield
    finally:
        delattr(XnnpackBackend, name)


@contextmanager
def _duplicates_share_parameters() -> Iterator[None]:
    """While lowering, ExecuTorch's `duplicate_constant_node` gives a parameter read both
    inside a delegate and outside it (a tied embedding: XNNPACK's `lm_head`, the gather
    outside) a second placeholder holding the *same* tensor instead of a deep copy.

    The copy exists so that each side has its own placeholder; its data is never changed
    (a parameter of an inference program), and the `.ptd` stores the table once anyway
    (`shared_constants`). Deep-copied, it held a second copy of the table (593 MiB at
    Qwen3's vocabulary) from partitioning to the end of `to_executorch`, the lowering's
    peak. The pass reaches `copy.deepcopy` through its module's `copy` name, which is
    swapped for the duration of the lowering: parameters are shared, everything else
    (buffers, constants, the input specs) is still deep-copied. The bundle is
    byte-identical either way (`tests/pipeline/test_lowering_memory.py`)."""
    import torch

    try:
        from executorch.exir.backend.canonical_partitioners import (
            duplicate_constant_node_pass as module,
        )
    except ImportError:
        yield
        return
    original = getattr(module, "copy", None)
    if original is not copy:
        yield  # not the module this was written against: leave it as it is
        return

    def deepcopy(value: Any, memo: dict[int, Any] | None = None) -> Any:
        if isinstance(value, torch.nn.Parameter):
            return value
        return copy.deepcopy(value, memo)

    module.copy = types.SimpleNamespace(deepcopy=deepcopy)
    try:
        yield
    finally:
        module.copy = original


def _copy_sharing_weights(cls: type, program: Any, compile_specs: list[Any]) -> Any:
    """`copy.deepcopy(program)`, except that its `state_dict` and `constants` tensors are
    the same objects (new dicts holding them): the memo answers each by itself."""
    import torch

    tensors = [*program.state_dict.values(), *program.constants.values()]
    memo = {id(t): t for t in tensors if isinstance(t, torch.Tensor)}
    return copy.deepcopy(program, memo)


def forget_lowered_graphs() -> None:
    """Drop what torch and ExecuTorch keep, process-wide, after a lowering: a graph node in
    XNNPACK's "why not partitioned" note, an `lru_cache` over graph nodes and fake-tensor
    dispatch cache entries. Each reaches the lowered graph and through it the exported
    program with every weight: measured at Qwen3's shape, the weights stayed alive through
    validation (a whole extra copy) until these were cleared."""
    from executorch.exir.backend import utils as backend_utils
    from torch._subclasses.fake_tensor import FakeTensorMode

    backend_utils.is_same_node.cache_clear()
    FakeTensorMode.cache_clear()
    try:
        from executorch.backends.xnnpack.partition.config import xnnpack_config
    except ImportError:
        return
    xnnpack_config.why.node = None


def _xnnpack_partitioners() -> list[Any]:
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner

    return [XnnpackPartitioner()]


def _no_partitioners() -> list[Any]:
    return []


class ExecuTorchCpuBackend:
    """One CPU backend: its name and the partitioners it lowers with (made when lowering)."""

    def __init__(self, name: str, partitioners: Callable[[], list[Any]]) -> None:
        self.name = name
        self._partitioners = partitioners

    def unavailable_reason(self) -> str | None:
        if importlib.util.find_spec("executorch") is None:
            return "the executorch package is not installed (pip install executorch==1.5.1)"
        return None

    def packages(self) -> tuple[str, ...]:
        return ()  # executorch and torch are every build's (package_versions)

    def identity(self) -> dict[str, Any]:
        return {}

    def lower(
        self,
        program: Any,
        manifest: ResolvedManifest,
        plan: ExportPlan,
        recipe: LoweringRecipe | None = None,
    ) -> LoweredProgram:
        require_fp32(manifest, self.name)
        if manifest.quantize is not None:
            recipe = _with_quant_fusion(recipe)
        if self.name == "xnnpack" and shared_constants(program):
            recipe = _with_one_copy_of_constants(recipe)
        pte, data = lower_files(program, self._partitioners(), self.name, recipe)
        return LoweredProgram(self.name, pte, data)


def _with_one_copy_of_constants(recipe: LoweringRecipe | None) -> LoweringRecipe:
    """`recipe` with every constant, the program's and the delegates', in one external
    data file, where a weight both read (a tied embedding) is stored once
    (`shared_constants`)."""
    from executorch.exir import ExecutorchBackendConfig

    recipe = recipe or LoweringRecipe()
    config = recipe.backend_config or ExecutorchBackendConfig()
    return dataclasses.replace(
        recipe,
        transform_passes=[*recipe.transform_passes, tag_delegate_constants],
        backend_config=dataclasses.replace(config, external_constants=True),
    )


def _with_quant_fusion(recipe: LoweringRecipe | None) -> LoweringRecipe:
    """`recipe` plus ExecuTorch's quant fusion: torchao's quantized embeddings (dequantize +
    embedding) become the quantized embedding kernels; without it the `.pte` keeps
    `torchao::dequantize_affine`, which has no ExecuTorch kernel."""
    from executorch.exir import ExecutorchBackendConfig

    recipe = recipe or LoweringRecipe()
    config = recipe.backend_config or ExecutorchBackendConfig()
    fused = dataclasses.replace(config, do_quant_fusion_and_const_prop=True)
    return dataclasses.replace(recipe, backend_config=fused)


def xnnpack() -> ExecuTorchCpuBackend:
    return ExecuTorchCpuBackend("xnnpack", _xnnpack_partitioners)


def portable() -> ExecuTorchCpuBackend:
    return ExecuTorchCpuBackend("portable", _no_partitioners)
