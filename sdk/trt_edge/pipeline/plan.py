"""The `plan` stage: what torch.export sees and which shapes validation runs.

One `torch.export.Dim` per manifest symbol, spanning the export domain (the
union of all profiles), shared by every input that uses the symbol. Samples
sit at each profile's min, opt and max; "outside" probes sit one step past
each profile's bounds, where the runner must refuse. Integer inputs are drawn
inside their declared `values` so a token-id input never goes out of vocabulary.

The plan is plain data (no torch objects) so it can be hashed, printed and
tested without importing torch; `dynamic_shapes()` builds the torch objects.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from trt_edge_runner.bundle_format import TensorSpec
from trt_edge_runner.dtypes import DTYPES

from trt_edge.manifest.resolved import ResolvedManifest
from trt_edge.pipeline.errors import BadInputError

# Host samples are numpy arrays: the dtypes numpy carries, from the one dtype table.
_NUMPY_DTYPES: dict[str, Any] = {d.name: np.dtype(d.numpy) for d in DTYPES if d.numpy is not None}


@dataclass(frozen=True)
class Sample:
    """One validation point: `symbols` inside profile `profile` at `point` (min/opt/max)."""

    profile: int
    point: str
    symbols: dict[str, int]
    seed: int


@dataclass(frozen=True)
class OutsideProbe:
    """A shape one step outside profile `profile` along `symbol`; the runner must reject it."""

    profile: int
    symbol: str
    value: int
    bound: str  # "min" or "max": which bound it steps past
    symbols: dict[str, int]


@dataclass(frozen=True)
class ExportPlan:
    domain: dict[str, tuple[int, int]]  # symbol -> (lo, hi) over all profiles
    dynamic: tuple[str, ...]  # symbols that get a Dim (lo < hi); others are static
    example_symbols: dict[str, int]  # the values the export example inputs use
    samples: tuple[Sample, ...]
    outside: tuple[OutsideProbe, ...]

    def dynamic_shapes(self, inputs: tuple[TensorSpec, ...]) -> tuple[Any, ...]:
        """torch.export `dynamic_shapes`, positional, one shared Dim per symbol."""
        from torch.export import Dim

        dims = {s: Dim(s, min=self.domain[s][0], max=self.domain[s][1]) for s in self.dynamic}
        shapes: list[Any] = []
        for spec in inputs:
            axes = {
                i: dims[d] for i, d in enumerate(spec.shape) if isinstance(d, str) and d in dims
            }
            shapes.append(axes or None)
        return tuple(shapes)


def _example_value(lo: int, hi: int) -> int:
    """The export example sits at the top of the domain.

    0 and 1 would be burnt in as constants, so the value must be >= 2. The top
    rather than an opt value because ExecuTorch 1.5.1's XNNPACK lowering sizes
    some planned buffers from the example (a conv over batch exported at 4
    refuses batch 16 at run time, error 0x10, although the Dim allows 32);
    exporting at the maximum keeps every profile inside the planned capacity,
    and validation runs every profile's max to prove it.
    """
    return hi if hi >= 2 else lo


def make_plan(manifest: ResolvedManifest) -> ExportPlan:
    for i, spec in enumerate(manifest.inputs):
        if spec.dtype not in _NUMPY_DTYPES:
            where = manifest.where("inputs", i, "dtype")
            raise BadInputError(
                f"{where}: inputs[{i}] {spec.name}: dtype {spec.dtype} has no host sample "
                f"generator; supported: {', '.join(sorted(_NUMPY_DTYPES))}"
            )
    domain = manifest.export_domain()
    dynamic = tuple(s for s, (lo, hi) in domain.items() if lo < hi)
    example = {
        s: (_example_value(lo, hi) if s in dynamic else lo) for s, (lo, hi) in domain.items()
    }
    samples: list[Sample] = []
    outside: list[OutsideProbe] = []
    for index, profile in enumerate(manifest.profiles):
        seen: list[dict[str, int]] = []
        for point in ("min", "opt", "max"):
            symbols = {s: getattr(r, point) for s, r in profile.dims.items()}
            if symbols in seen:
                continue
            seen.append(symbols)
            samples.append(Sample(index, point, symbols, seed=1000 * index + len(seen)))
        opt = profile.opt_symbols()
        for symbol, r in profile.dims.items():
            if r.min - 1 >= 1:
                outside.append(
                    OutsideProbe(index, symbol, r.min - 1, "min", {**opt, symbol: r.min - 1})
                )
            outside.append(
                OutsideProbe(index, symbol, r.max + 1, "max", {**opt, symbol: r.max + 1})
            )
    return ExportPlan(
        domain=domain,
        dynamic=dynamic,
        example_symbols=example,
        samples=tuple(samples),
        outside=tuple(outside),
    )


def sample_inputs(
    inputs: tuple[TensorSpec, ...], symbols: dict[str, int], seed: int
) -> list[np.ndarray]:
    """Deterministic inputs for one shape: normal floats, integers inside `values`."""
    rng = np.random.default_rng(seed)
    arrays: list[np.ndarray] = []
    for spec in inputs:
        shape = spec.dims_for(symbols)
        dtype = _NUMPY_DTYPES[spec.dtype]
        if spec.dtype == "bool":
            arrays.append(rng.integers(0, 2, size=shape).astype(np.bool_))
        elif np.issubdtype(dtype, np.integer):
            low, high = spec.values if spec.values is not None else (0, 100)
            arrays.append(rng.integers(low, high, size=shape).astype(dtype))
        else:
            arrays.append(rng.standard_normal(size=shape).astype(dtype))
    return arrays
