"""The exported program as ONNX: what TensorRT's own ONNX parser turns into a network.

The converter is PyTorch's ONNX exporter (`torch.onnx.export(..., dynamo=True)`, which takes
the same `ExportedProgram` the CPU backends lower, so both paths see one program) and
TensorRT's ONNX parser; trt-edge writes no layer by hand. The ONNX inputs are named after
the manifest's inputs and keep their order (the delegate binds argument *i* to engine input
*i*), the outputs are `output_0..N` like the bundle's output specs, and every dynamic
dimension stays dynamic over the export domain, so the builder's profiles decide the shapes.

An operator the exporter cannot translate is refused here, at the manifest's model line,
with the operator named; one TensorRT cannot parse is refused by `trt_engine`.

A strongly typed network (TensorRT-RTX) takes its precision from the ONNX types, so an fp16
build exports the program made fp16 in PyTorch (`half_program`: weights and buffers fp16,
float inputs cast to fp16 on the way in and float outputs back to the manifest's dtype on the
way out) and re-exported. Casting in PyTorch rather than rewriting the ONNX graph keeps
PyTorch's own type promotion: a value the model computes in fp32 on purpose (an explicit
`.float()`, an fp32 constant) stays fp32, with the casts written into the graph.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from typing import Any

from trt_edge.manifest.resolved import ResolvedManifest
from trt_edge.pipeline.errors import LoweringError
from trt_edge.pipeline.plan import ExportPlan, sample_inputs

# The opset the exporter writes; TensorRT(-RTX) 1.x and 10.x parse opset 9..23.
OPSET = 20


@dataclass(frozen=True)
class OnnxModel:
    """The serialized ONNX model and the names its graph uses for the engine's I/O."""

    data: bytes
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    opset: int


def model_line(manifest: ResolvedManifest) -> str:
    """`file:line:col` of the manifest's model source (its entrypoint, Hugging Face folder or
    exported program), where conversion errors point."""
    if manifest.entrypoint is not None:
        return manifest.where("model", "entrypoint")
    return manifest.where("model", "huggingface" if manifest.huggingface else "exported")


def output_names(program: Any) -> tuple[str, ...]:
    return tuple(f"output_{i}" for i in range(len(program.graph_signature.user_outputs)))


def to_onnx(
    program: Any, manifest: ResolvedManifest, plan: ExportPlan, *, half: bool = False
) -> OnnxModel:
    """`program` (made fp16 inside when `half`) through PyTorch's ONNX exporter; a failure
    names the operator and the manifest line of the model."""
    import torch

    mutated = mutated_buffers(program)
    if mutated:
        names = ", ".join(mutated)
        raise LoweringError(
            f"{model_line(manifest)}: the program writes the buffers {names} in place "
            "(mutable buffers), and a TensorRT engine has none",
            hint="pass such state in and out of forward() as tensors (the example tiny_llm's "
            "k_cache/v_cache), or build this model with --backend xnnpack",
        )
    inputs = tuple(spec.name for spec in manifest.inputs)
    outputs = output_names(program)
    example = tuple(
        torch.from_numpy(a) for a in sample_inputs(manifest.inputs, plan.example_symbols, seed=0)
    )
    if half:
        program = half_program(program, manifest, plan, example)
    try:
        exported = torch.onnx.export(
            program,
            example,
            dynamo=True,
            input_names=list(inputs),
            output_names=list(outputs),
            opset_version=OPSET,
            optimize=True,
            verbose=False,
        )
    except Exception as exc:
        raise LoweringError(
            f"{model_line(manifest)}: PyTorch's ONNX exporter cannot convert the model"
            f"{_operator_named(exc)}: {_summary(exc)}",
            hint="rewrite that operation in operators ONNX has, or build this model with "
            "--backend xnnpack",
        ) from exc
    if exported is None:  # only when an output file was given; never here
        raise LoweringError(f"{model_line(manifest)}: the ONNX exporter returned no model")
    proto = exported.model_proto
    got = tuple(i.name for i in proto.graph.input)
    if got != inputs:
        raise LoweringError(
            f"{model_line(manifest)}: the ONNX graph's inputs are {list(got)}, the manifest's "
            f"{list(inputs)}; an input forward() does not use is dropped by the exporter",
            hint="remove unused inputs from the manifest and forward()",
        )
    return OnnxModel(proto.SerializeToString(), inputs, outputs, OPSET)


def half_program(
    program: Any, manifest: ResolvedManifest, plan: ExportPlan, example: tuple[Any, ...]
) -> Any:
    """`program` with fp16 weights, buffers and activations and its I/O dtypes unchanged,
    exported again over the same dynamic shapes."""
    import torch

    class Half(torch.nn.Module):
        """The program's module in fp16 between casts at its inputs and outputs."""

        def __init__(self) -> None:
            super().__init__()
            # A copy: `.to` converts parameters in place, and they are the program's own.
            self.inner = copy.deepcopy(program.module()).to(torch.float16)

        def forward(self, *args: Any) -> Any:
            cast = [a.half() if a.is_floating_point() else a for a in args]
            out = self.inner(*cast)
            flat = out if isinstance(out, tuple | list) else (out,)
            back = tuple(
                o.to(e.dtype) if o.is_floating_point() else o
                for o, e in zip(flat, expected, strict=True)
            )
            return back if isinstance(out, tuple | list) else back[0]

    with torch.no_grad():
        expected = program.module()(*example)
        expected = expected if isinstance(expected, tuple | list) else (expected,)
        try:
            return torch.export.export(
                Half(),
                example,
                dynamic_shapes=(plan.dynamic_shapes(manifest.inputs),),
                strict=False,
            )
        except Exception as exc:
            raise LoweringError(
                f"{manifest.where('build', 'precision')}: build.precision: fp16: the model "
                f"cannot be exported in fp16: {_first_line(exc)}",
                hint="the exported program is made fp16 after export, which a program that fixes "
                "its own dtypes (`.to(torch.float32)`, as Hugging Face's norms do) does not "
                "survive; set build.precision: fp32 for this model on TensorRT-RTX",
            ) from exc


def mutated_buffers(program: Any) -> tuple[str, ...]:
    """The buffers `program` writes: recorded mutations of a functional program, and in-place
    operators on buffer placeholders of one torch.export left unfunctionalized."""
    signature = program.graph_signature
    found = set(signature.buffers_to_mutate.values())
    buffers = {
        spec.arg.name: spec.target
        for spec in signature.input_specs
        if spec.kind.name == "BUFFER" and spec.target is not None
    }
    for node in program.graph.nodes:
        schema = getattr(node.target, "_schema", None)
        if node.op != "call_function" or schema is None or not schema.is_mutable:
            continue
        for arg, value in zip(schema.arguments, node.args, strict=False):
            if arg.alias_info is not None and arg.alias_info.is_write:
                name = getattr(value, "name", None)
                if name in buffers:
                    found.add(buffers[name])
    return tuple(sorted(found))


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0] if text else ''}"


_OPERATOR = re.compile(r"OpOverload\(op='([\w.]+)', overload='(\w+)'\)")
_ANY_OPERATOR = re.compile(r"\b(?:aten|prims|torchao|llama|quantized_decomposed)\.\w+(?:\.\w+)?")


def _operator_named(exc: BaseException) -> str:
    """` (operator prims.prod.default)` when the exporter's message names the operator it
    has no ONNX function for (in its exception summary, not its first line)."""
    text = str(exc)
    found = _OPERATOR.search(text)
    if found:
        return f" (operator {found.group(1)}.{found.group(2)})"
    other = _ANY_OPERATOR.search(text)
    return f" (operator {other.group(0)})" if other else ""


def _summary(exc: BaseException) -> str:
    """The exporter's own one-line diagnosis: its exception summary's first entry, else the
    first line of the message, without terminal colours."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", str(exc)).strip()
    marker = "## Exception summary"
    if marker in text:
        for line in text.split(marker, 1)[1].splitlines():
            if line.strip():
                return re.sub(r"^<class '[\w.]+\.(\w+)'>", r"\1", line.strip())
    return _first_line(exc)
