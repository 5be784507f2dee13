"""The `export` stage: torch.export over the export domain, failures told in manifest terms.

torch reports a narrowed symbol as "Constraints violated (seq)! ... Suggested
fixes: seq = Dim('seq', max=64)". A user wrote profiles, not Dims, so we turn
that into: which symbol, which range torch inferred, which range the profiles
need, and which profiles fall outside it.
"""

from __future__ import annotations

import re
from typing import Any

from trt_edge_runner.bundle_format import TensorSpec

from trt_edge.manifest.resolved import ResolvedManifest
from trt_edge.pipeline.errors import ExportError, ModelSourceError
from trt_edge.pipeline.plan import ExportPlan, sample_inputs

_SUGGESTED_DIM = re.compile(r"(\w+) = Dim\(['\"](\w+)['\"](?:, min=(\d+))?(?:, max=(\d+))?\)")
_SUGGESTED_CONST = re.compile(r"^\s*(\w+) = (\d+)\s*$", re.MULTILINE)
_DATA_DEPENDENT = ("data-dependent", "data dependent", "GuardOnDataDependentSymNode")


def _profile_ranges(manifest: ResolvedManifest, symbol: str) -> str:
    parts = []
    for i, p in enumerate(manifest.profiles):
        r = p.dims.get(symbol)
        if r is not None:
            parts.append(f"{i} {p.name} [{r.min}, {r.max}]")
    return ", ".join(parts)


def explain_export_failure(manifest: ResolvedManifest, plan: ExportPlan, exc: BaseException) -> str:
    """One message naming the symbols at fault, torch's range and the profiles' range."""
    text = str(exc)
    where = manifest.where("profiles")
    lines: list[str] = []
    for match in _SUGGESTED_DIM.finditer(text):
        symbol = match.group(2)
        if symbol not in plan.domain:
            continue
        lo, hi = plan.domain[symbol]
        t_lo = int(match.group(3)) if match.group(3) else lo
        t_hi = int(match.group(4)) if match.group(4) else hi
        outside = [
            f"{i} {p.name}"
            for i, p in enumerate(manifest.profiles)
            if symbol in p.dims and (p.dims[symbol].min < t_lo or p.dims[symbol].max > t_hi)
        ]
        lines.append(
            f"symbol '{symbol}': the model only works for {symbol} in [{t_lo}, {t_hi}] "
            f"(torch inferred this from the model's code) but the profiles need [{lo}, {hi}] "
            f"({_profile_ranges(manifest, symbol)}); profiles outside: {', '.join(outside)}"
        )
    for match in _SUGGESTED_CONST.finditer(text):
        symbol, value = match.group(1), match.group(2)
        if symbol in plan.domain:
            lo, hi = plan.domain[symbol]
            lines.append(
                f"symbol '{symbol}': the model only works for {symbol} = {value} but the "
                f"profiles need [{lo}, {hi}] ({_profile_ranges(manifest, symbol)})"
            )
    if not lines and not type(exc).__module__.startswith("torch"):
        example = ", ".join(f"{s}={v}" for s, v in plan.example_symbols.items())
        lines.append(
            f"forward() raised {type(exc).__name__}: {exc} when torch.export called it with "
            f"the export example ({example}, the top of the export domain); every shape in "
            "the profiles must run"
        )
    if not lines:
        named = [s for s in plan.domain if re.search(rf"\b{re.escape(s)}\b", text)]
        if any(marker in text for marker in _DATA_DEPENDENT):
            lines.append(
                "the model's control flow or output shape depends on tensor values, which "
                "torch.export cannot capture for every input; make shapes depend only on "
                "input shapes (use torch.where / masks instead of Python branches on values)"
            )
        elif named:
            lines.append(
                "torch.export failed on symbol(s) "
                + ", ".join(f"'{s}' [{plan.domain[s][0]}, {plan.domain[s][1]}]" for s in named)
            )
    first = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
    detail = "\n  ".join(lines) if lines else f"{type(exc).__name__}: {first}"
    return (
        f"{where}: torch.export could not capture {manifest.name} over the profiles' "
        f"export domain:\n  {detail}\n  torch said: {type(exc).__name__}: {first}"
    )


def example_args(inputs: tuple[TensorSpec, ...], plan: ExportPlan) -> tuple[Any, ...]:
    """The export's example inputs: one sample at the plan's example symbols."""
    import torch

    arrays = sample_inputs(inputs, plan.example_symbols, seed=0)
    return tuple(torch.from_numpy(a) for a in arrays)


def export_program(manifest: ResolvedManifest, plan: ExportPlan, module: Any) -> Any:
    """torch.export.export with one Dim per symbol; errors become `ExportError`."""
    import torch

    args = example_args(manifest.inputs, plan)
    try:
        with torch.no_grad():
            return torch.export.export(
                module, args, dynamic_shapes=plan.dynamic_shapes(manifest.inputs), strict=False
            )
    except Exception as exc:
        raise ExportError(explain_export_failure(manifest, plan, exc)) from exc


def check_exported_domain(manifest: ResolvedManifest, plan: ExportPlan, program: Any) -> None:
    """A saved `.pt2` must accept the whole export domain; say which dim does not."""
    where = manifest.where("model", "exported")
    placeholders = _user_input_values(program)
    for spec, value in zip(manifest.inputs, placeholders, strict=True):
        shape = list(value.shape)
        if len(shape) != len(spec.shape):
            raise ModelSourceError(
                f"{where}: input {spec.name}: the program takes rank {len(shape)}, "
                f"the manifest declares shape {list(spec.shape)}"
            )
        for axis, (dim, got) in enumerate(zip(spec.shape, shape, strict=True)):
            lo, hi = (dim, dim) if isinstance(dim, int) else plan.domain[dim]
            if isinstance(got, int):
                if lo != got or hi != got:
                    raise ModelSourceError(
                        f"{where}: input {spec.name} dim {axis}: the program was exported "
                        f"with a static size {got} but the manifest needs {dim} in [{lo}, {hi}]",
                        hint="re-export with dynamic_shapes covering every profile",
                    )
                continue
            vr = program.range_constraints.get(got.node.expr)
            if vr is None:
                continue
            t_lo, t_hi = int(vr.lower), vr.upper
            t_hi_i = int(t_hi) if t_hi.is_finite else None
            if t_lo > lo or (t_hi_i is not None and t_hi_i < hi):
                raise ModelSourceError(
                    f"{where}: input {spec.name} dim {axis} ({dim}): the program accepts "
                    f"[{t_lo}, {t_hi_i if t_hi_i is not None else 'inf'}] but the profiles "
                    f"need [{lo}, {hi}]",
                    hint="re-export with a Dim spanning every profile's range",
                )


def _user_input_values(program: Any) -> list[Any]:
    user = set(program.graph_signature.user_inputs)
    return [
        node.meta["val"]
        for node in program.graph.nodes
        if node.op == "placeholder" and node.name in user
    ]


def output_specs(manifest: ResolvedManifest, program: Any) -> tuple[TensorSpec, ...]:
    """Output names, dtypes and symbolic shapes, symbols renamed to the manifest's."""
    names: dict[str, str] = {}
    for spec, value in zip(manifest.inputs, _user_input_values(program), strict=True):
        for dim, got in zip(spec.shape, value.shape, strict=True):
            if isinstance(dim, str) and not isinstance(got, int):
                names[str(got.node.expr)] = dim
    outputs: list[TensorSpec] = []
    output_node = next(n for n in program.graph.nodes if n.op == "output")
    values = output_node.args[0]
    user_outputs = list(program.graph_signature.user_outputs)
    flat = [v for v in values if getattr(v, "name", None) in user_outputs] or list(values)
    for i, node in enumerate(flat):
        val = node.meta["val"]
        shape: list[int | str] = []
        for d in val.shape:
            if isinstance(d, int):
                shape.append(d)
            else:
                expr = str(d.node.expr)
                for sym_name, manifest_name in sorted(names.items(), key=lambda kv: -len(kv[0])):
                    expr = re.sub(rf"\b{re.escape(sym_name)}\b", manifest_name, expr)
                shape.append(expr)
        dtype = str(val.dtype).removeprefix("torch.")
        outputs.append(TensorSpec(name=f"output_{i}", dtype=dtype, shape=tuple(shape)))
    return tuple(outputs)
