"""`trt-edge inspect --engines`: each engine read back by TensorRT and held to its record.

A bundle records what each engine's builder was given (`EngineRecord`, source `builder`).
Where TensorRT and a CUDA driver are at hand, this deserializes every engine with the
flavour that built it and reads the engine's own table — its optimization profiles
(`num_optimization_profiles`, `get_tensor_profile_shape(name, i)` per dynamic input) and
its I/O — and lists every way it differs from the record. Without a driver TensorRT cannot
even check an engine's validity; the refusal says so and names what is missing.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

from trt_edge_runner.bundle_format import EngineRecord

from trt_edge.inspect.errors import InspectError


class EngineReadError(InspectError):
    """An engine could not be read back (no TensorRT, no CUDA driver, or a refusal)."""


@dataclass(frozen=True)
class EngineTable:
    """What a deserialized engine says of itself."""

    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    # per profile, per dynamic input: (min, opt, max)
    profiles: tuple[dict[str, tuple[tuple[int, ...], ...]], ...]


def read_engine_table(engine: bytes, record: EngineRecord, source: str) -> EngineTable:
    """Deserialize `engine` with the TensorRT flavour that built it and read its table."""
    try:
        trt = importlib.import_module(record.flavour)
    except (ImportError, OSError) as exc:
        raise EngineReadError(
            f"{source}: the engine was built by {record.flavour} {record.version}, which is "
            f"not importable here ({type(exc).__name__}: {exc}); run this where it is "
            "installed, next to a CUDA driver"
        ) from None
    errors: list[str] = []

    class Logger(trt.ILogger):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            trt.ILogger.__init__(self)

        def log(self, severity: Any, msg: str) -> None:
            if severity in (trt.ILogger.Severity.ERROR, trt.ILogger.Severity.INTERNAL_ERROR):
                errors.append(msg)

    runtime = trt.Runtime(Logger())
    cuda_engine = runtime.deserialize_cuda_engine(engine) if runtime is not None else None
    if cuda_engine is None:
        built_for = ", ".join(record.compute_capabilities) or "the GPU it was built on"
        raise EngineReadError(
            f"{source}: {record.flavour} {record.version} could not deserialize the engine: "
            + ("; ".join(errors) or "no reason given")
            + f" (reading an engine back needs a CUDA driver and a GPU it was built for: "
            f"{built_for})"
        )
    names = [cuda_engine.get_tensor_name(i) for i in range(cuda_engine.num_io_tensors)]
    is_input = [cuda_engine.get_tensor_mode(n) == trt.TensorIOMode.INPUT for n in names]
    inputs = tuple(n for n, i in zip(names, is_input, strict=True) if i)
    outputs = tuple(n for n, i in zip(names, is_input, strict=True) if not i)
    dynamic = [n for n in inputs if -1 in tuple(cuda_engine.get_tensor_shape(n))]
    profiles = tuple(
        {
            n: tuple(tuple(int(d) for d in s) for s in cuda_engine.get_tensor_profile_shape(n, i))
            for n in dynamic
        }
        for i in range(cuda_engine.num_optimization_profiles)
    )
    return EngineTable(inputs, outputs, profiles)


def differences(record: EngineRecord, table: EngineTable) -> list[str]:
    """Every way the engine's own table differs from the build's record (empty: agrees)."""
    found: list[str] = []
    if table.inputs != tuple(t.name for t in record.inputs):
        found.append(f"inputs {list(table.inputs)}, recorded {[t.name for t in record.inputs]}")
    if table.outputs != tuple(t.name for t in record.outputs):
        found.append(f"outputs {list(table.outputs)}, recorded {[t.name for t in record.outputs]}")
    if len(table.profiles) != len(record.profiles):
        found.append(f"{len(table.profiles)} profiles, recorded {len(record.profiles)}")
    for i, (got, want) in enumerate(zip(table.profiles, record.profiles, strict=False)):
        if got != want.shapes:
            found.append(f"profile {i} ({want.name}): engine {got}, recorded {want.shapes}")
    return found
