"""A built TensorRT engine as the `.pte`'s delegate, in upstream's blob format.

ExecuTorch's own lowering (`to_edge_transform_and_lower` with a partitioner) places the
delegate: the whole graph is tagged for the backend `TensorRTBackend` — the id under which
upstream's ExecuTorch TensorRT runtime (pytorch/TensorRT `TensorRTBackend.cpp`) registers —
so the program's forward becomes one `executorch_call_delegate` over the user inputs in
forward() order and returns the engine's outputs in order, which is exactly how upstream's
runtime binds them (argument *i* to input binding *i*, output *j* to output binding *j*).
The delegate's processed bytes are the engine in a TR01 blob (`trt_edge.inspect.trt_blob`,
byte-for-byte upstream's `serialize_engine`), and the engine's record travels as the
delegate's compile spec `trt_edge.engine`, so any reader of the `.pte` (the build's
`read_delegates`, `trt-edge inspect`) finds it beside the engine it describes.

The engine is built before lowering starts (`trt_engine`); `preprocess` only hands the blob
over, looked up by the engine's sha256 from the blobs this module was given for the call.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, final

from executorch.exir import to_edge_transform_and_lower
from executorch.exir.backend.backend_details import BackendDetails, PreprocessResult
from executorch.exir.backend.compile_spec_schema import CompileSpec
from executorch.exir.backend.partitioner import DelegationSpec, Partitioner, PartitionResult
from executorch.exir.backend.utils import tag_constant_data
from trt_edge_runner.bundle_format import EngineRecord

from trt_edge.inspect.trt_blob import (
    TENSORRT_BACKEND_ID,
    IOBinding,
    TrtBlobMetadata,
    write_trt_blob,
)
from trt_edge.pipeline.delegates import ENGINE_SPEC
from trt_edge.pipeline.errors import LoweringError

_TAG = "tensorrt_engine_0"
_BLOBS: dict[str, bytes] = {}  # engine sha256 -> TR01 blob, while a lowering runs


def engine_blob(engine: bytes, record: EngineRecord) -> bytes:
    """The engine in upstream's TR01 blob: I/O bindings by name, inputs first, in order."""
    bindings = tuple(IOBinding(t.name, is_input=True) for t in record.inputs) + tuple(
        IOBinding(t.name, is_input=False) for t in record.outputs
    )
    return write_trt_blob(engine, TrtBlobMetadata(io_bindings=bindings))


def record_spec(record: EngineRecord) -> CompileSpec:
    text = json.dumps(record.to_dict(), sort_keys=True, separators=(",", ":"))
    return CompileSpec(ENGINE_SPEC, text.encode("utf-8"))


def record_from_spec(value: bytes) -> EngineRecord:
    return EngineRecord.from_dict(json.loads(value.decode("utf-8")))


@final
class TensorRTBackend(BackendDetails):  # type: ignore[misc]
    """Hands ExecuTorch the prebuilt engine's blob for the partition it was built from."""

    @staticmethod
    def preprocess(edge_program: Any, compile_specs: list[CompileSpec]) -> PreprocessResult:
        spec = next((s for s in compile_specs if s.key == ENGINE_SPEC), None)
        if spec is None:
            raise LoweringError(f"TensorRT delegate without its {ENGINE_SPEC} compile spec")
        record = record_from_spec(spec.value)
        user_inputs = list(edge_program.graph_signature.user_inputs)
        if len(user_inputs) != len(record.inputs):
            raise LoweringError(
                f"the delegate takes {len(user_inputs)} inputs ({', '.join(user_inputs)}) but "
                f"the engine has {len(record.inputs)}; every forward() input must be used"
            )
        return PreprocessResult(processed_bytes=_BLOBS[record.engine_sha256])


class _WholeProgram(Partitioner):  # type: ignore[misc]
    """Every operator of the program in one TensorRT partition (the engine is the program)."""

    def __init__(self, record: EngineRecord) -> None:
        super().__init__()
        self.delegation = DelegationSpec(TENSORRT_BACKEND_ID, [record_spec(record)])

    def partition(self, exported_program: Any) -> PartitionResult:
        for node in exported_program.graph_module.graph.nodes:
            if node.op == "call_function":
                node.meta["delegation_tag"] = _TAG
        tag_constant_data(exported_program)
        return PartitionResult(
            tagged_exported_program=exported_program, partition_tags={_TAG: self.delegation}
        )


@contextmanager
def _serving(sha256: str, blob: bytes) -> Iterator[None]:
    _BLOBS[sha256] = blob
    try:
        yield
    finally:
        _BLOBS.pop(sha256, None)


def wrap(program: Any, engine: bytes, record: EngineRecord) -> bytes:
    """The `.pte` whose forward is the engine: one TensorRT delegate, weights inside it."""
    with _serving(record.engine_sha256, engine_blob(engine, record)):
        try:
            edge = to_edge_transform_and_lower(program, partitioner=[_WholeProgram(record)])
            return bytes(edge.to_executorch().buffer)
        except LoweringError:
            raise
        except Exception as exc:
            text = str(exc).strip().splitlines()
            raise LoweringError(
                f"ExecuTorch could not place the TensorRT engine as the program's delegate: "
                f"{type(exc).__name__}: {text[0] if text else ''}"
            ) from exc
