"""ONNX → one TensorRT engine with the manifest's optimization profiles, and the record of it.

The manifest's ordered profiles become the builder's optimization profiles in that order
(profile *i* of the engine is profile *i* of the manifest), each dynamic input getting the
profile's min/opt/max; static inputs need none. What the builder was given is read back from
each `IOptimizationProfile` after it is set, and what it reported — the network's I/O as
parsed, the memory it planned (its own log lines: weights once, activations per profile), the
engine's size — goes into an `EngineRecord`, the delegate's entry in `bundle.json`.

Errors name the place: a node TensorRT's parser refuses by name and operator at the
manifest's model line; a profile the builder refuses at that profile's line.
"""

from __future__ import annotations

import hashlib
import re
import time
from dataclasses import dataclass
from typing import Any

from trt_edge_runner.bundle_format import EngineIO, EngineProfile, EngineRecord

from trt_edge.manifest.resolved import ResolvedManifest
from trt_edge.pipeline.errors import LoweringError
from trt_edge.pipeline.lower.backend import Progress
from trt_edge.pipeline.lower.trt_flavour import Flavour
from trt_edge.pipeline.lower.trt_onnx import OnnxModel, model_line


@dataclass(frozen=True)
class BuiltEngine:
    """A serialized engine, its record, and how long the builder took (kept out of the
    record: the record travels inside the `.pte`, which must not change with the clock)."""

    engine: bytes
    record: EngineRecord
    build_seconds: float


# What a strongly typed network can be made here: fp32 as exported, fp16 by trt_onnx's pass.
STRONGLY_TYPED_PRECISIONS = ("fp32", "fp16")


# What fp16-by-conversion cannot reach (trt_onnx.half_program): code that fixes a dtype itself.
FP32_ISLANDS = "`.to(torch.float32)`, `dtype=torch.float32` constants"


def profile_shapes(manifest: ResolvedManifest) -> list[dict[str, tuple[tuple[int, ...], ...]]]:
    """Per manifest profile, in order, per dynamic input: (min, opt, max) shapes.

    Plain data, so what the builder is given is tested without TensorRT."""
    shapes: list[dict[str, tuple[tuple[int, ...], ...]]] = []
    for profile in manifest.profiles:
        per_input: dict[str, tuple[tuple[int, ...], ...]] = {}
        for spec in manifest.inputs:
            if all(isinstance(d, int) for d in spec.shape):
                continue
            ((lo, hi),) = profile.bounds((spec,))
            per_input[spec.name] = (
                tuple(lo),
                tuple(spec.dims_for(profile.opt_symbols())),
                tuple(hi),
            )
        shapes.append(per_input)
    return shapes


def _compute_capability(trt: Any, sm: str) -> Any:
    member = "SM" + sm.replace(".", "")
    if not hasattr(trt.ComputeCapability, member):
        known = [m for m in trt.ComputeCapability.__members__ if m.startswith("SM")]
        raise LoweringError(
            f"compute capability {sm} is not one this TensorRT builds for ({', '.join(known)})",
            hint="pick a target whose compute capabilities this TensorRT lists",
        )
    return getattr(trt.ComputeCapability, member)


def build_engine(
    onnx: OnnxModel,
    manifest: ResolvedManifest,
    flavour: Flavour,
    compute_capabilities: tuple[str, ...],
    progress: Progress | None = None,
) -> BuiltEngine:
    """Parse `onnx` with the flavour's ONNX parser and build one multi-profile engine."""
    trt = flavour.load()
    logger = _capturing_logger(trt)
    builder = trt.Builder(logger)
    # No creation flags: TensorRT-RTX networks are strongly typed by default, and regular
    # TensorRT stays weakly typed so that _set_precision's builder flags apply.
    network = builder.create_network(0)
    parser = trt.OnnxParser(network, logger)
    if not parser.parse(onnx.data):
        raise _parse_failure(parser, manifest, half_network(flavour, manifest))
    config = builder.create_builder_config()
    _set_precision(trt, config, flavour, manifest)
    if flavour.sets_compute_capabilities and compute_capabilities:
        config.num_compute_capabilities = len(compute_capabilities)
        for i, sm in enumerate(compute_capabilities):
            config.set_compute_capability(_compute_capability(trt, sm), i)
    monitor = _monitor(trt, progress)
    if monitor is not None:
        config.progress_monitor = monitor
    profiles = _add_profiles(trt, builder, config, manifest)
    started = time.monotonic()
    serialized = builder.build_serialized_network(network, config)
    seconds = time.monotonic() - started
    if serialized is None:
        raise _build_failure(logger, manifest)
    engine = bytes(memoryview(serialized))
    record = EngineRecord(
        flavour=flavour.name,
        version=flavour.version() or "",
        compute_capabilities=tuple(compute_capabilities)
        if flavour.sets_compute_capabilities
        else (),
        precision=manifest.precision,
        onnx_opset=onnx.opset,
        inputs=_io(network.get_input(i) for i in range(network.num_inputs)),
        outputs=_io(network.get_output(i) for i in range(network.num_outputs)),
        profiles=profiles,
        weights_bytes=logger.weights_bytes(),
        activation_bytes=logger.activation_bytes(),
        engine_bytes=len(engine),
        engine_sha256=hashlib.sha256(engine).hexdigest(),
        source="builder",
    )
    return BuiltEngine(engine, record, round(seconds, 3))


def _set_precision(trt: Any, config: Any, flavour: Flavour, manifest: ResolvedManifest) -> None:
    """fp32 builds as exported. Other precisions: builder flags on regular TensorRT (weakly
    typed: TensorRT may choose them per layer); TensorRT-RTX takes the network's own types,
    which `trt_onnx` made fp16 for an fp16 build (`half_network`), so there fp16 needs no flag
    and any other precision is refused rather than ignored."""
    precision = manifest.precision
    if precision == "fp32":
        return
    if flavour.strongly_typed:
        if precision in STRONGLY_TYPED_PRECISIONS:
            return
        raise LoweringError(
            f"{manifest.where('build', 'precision')}: build.precision: {precision}: "
            f"{flavour.module} networks are strongly typed (precision is the network's own "
            f"dtypes), and trt-edge makes them {' or '.join(STRONGLY_TYPED_PRECISIONS)}",
            hint="set build.precision: fp16 (or fp32) for TensorRT-RTX targets",
        )
    flags = {"fp16": "FP16", "bf16": "BF16", "int8": "INT8", "fp8": "FP8"}
    config.set_flag(getattr(trt.BuilderFlag, flags[precision]))


def half_network(flavour: Flavour, manifest: ResolvedManifest) -> bool:
    """Whether the ONNX model must carry fp16 types itself (a strongly typed fp16 build)."""
    return flavour.strongly_typed and manifest.precision == "fp16"


def _add_profiles(
    trt: Any, builder: Any, config: Any, manifest: ResolvedManifest
) -> tuple[EngineProfile, ...]:
    added: list[EngineProfile] = []
    for index, shapes in enumerate(profile_shapes(manifest)):
        profile = builder.create_optimization_profile()
        for name, (lo, opt, hi) in shapes.items():
            profile.set_shape(name, lo, opt, hi)
        got = config.add_optimization_profile(profile)
        if got != index:
            raise LoweringError(
                f"{manifest.where('profiles', index)}: TensorRT refused profile {index} "
                f"({manifest.profiles[index].name}): add_optimization_profile returned {got}",
                hint="every dynamic input needs min <= opt <= max inside the network's shape",
            )
        read_back = {
            name: tuple(tuple(int(d) for d in dims) for dims in profile.get_shape(name))
            for name in shapes
        }
        added.append(EngineProfile(index, manifest.profiles[index].name, read_back))
    return tuple(added)


def _io(tensors: Any) -> tuple[EngineIO, ...]:
    return tuple(
        EngineIO(t.name, str(t.dtype).removeprefix("DataType."), tuple(int(d) for d in t.shape))
        for t in tensors
    )


def _parse_failure(parser: Any, manifest: ResolvedManifest, half: bool) -> LoweringError:
    lines = []
    for i in range(parser.num_errors):
        error = parser.get_error(i)
        node = f"node {error.node_name() or error.node()} ({error.node_operator()})"
        lines.append(f"{node}: {error.desc()}")
    first = lines[0] if lines else "the ONNX parser failed without saying why"
    more = f" (and {len(lines) - 1} more: {'; '.join(lines[1:4])})" if len(lines) > 1 else ""
    hint = (
        f"an fp16 network meets a value the model computes in fp32 ({FP32_ISLANDS}): make "
        "that part follow its input's dtype, or set build.precision: fp32"
        if half and "types" in first
        else "rewrite that operation in operators TensorRT supports, or build with "
        "--backend xnnpack"
    )
    return LoweringError(
        f"{model_line(manifest)}: TensorRT cannot convert the model: {first}{more}", hint=hint
    )


_PROFILE_IN_MESSAGE = re.compile(r"[Pp]rofile\s*(?:index\s*)?#?\s*(\d+)")


def _build_failure(logger: Any, manifest: ResolvedManifest) -> LoweringError:
    """The builder returned no engine: its errors, at the profile they name when they do."""
    errors = logger.errors() or ["the builder returned no engine and logged no error"]
    index = next((int(m.group(1)) for e in errors if (m := _PROFILE_IN_MESSAGE.search(e))), None)
    where = (
        f"{manifest.where('profiles', index)}: profile {index} ({manifest.profiles[index].name})"
        if index is not None and 0 <= index < len(manifest.profiles)
        else f"{manifest.where('profiles')}"
    )
    return LoweringError(
        f"{where}: TensorRT could not build the engine: {errors[0]}",
        hint="check each profile's shapes against what the model accepts; every builder "
        "error: " + " | ".join(errors[:5]),
    )


_WEIGHTS = re.compile(r"Total Weights Memory: (\d+) bytes")
_ACTIVATION = re.compile(r"Total Activation Memory: (\d+) bytes")


def _capturing_logger(trt: Any) -> Any:
    """A TensorRT logger that keeps what the builder says: errors for our messages, and
    the memory lines it writes once per profile (activations) and once per engine
    (weights). Made here because its base class is the flavour's own `ILogger`."""
    base = trt.ILogger
    failing = (base.Severity.ERROR, base.Severity.INTERNAL_ERROR)

    class Logger(base):  # type: ignore[misc, valid-type]
        def __init__(self) -> None:
            base.__init__(self)
            self.lines: list[tuple[Any, str]] = []

        def log(self, severity: Any, msg: str) -> None:
            self.lines.append((severity, msg))

        def errors(self) -> list[str]:
            return [m for s, m in self.lines if s in failing]

        def weights_bytes(self) -> int | None:
            found = [int(m.group(1)) for _, line in self.lines if (m := _WEIGHTS.search(line))]
            return found[-1] if found else None

        def activation_bytes(self) -> tuple[int, ...]:
            return tuple(
                int(m.group(1)) for _, line in self.lines if (m := _ACTIVATION.search(line))
            )

    return Logger()


def _monitor(trt: Any, progress: Progress | None) -> Any:
    """An `IProgressMonitor` forwarding the builder's top-level phases to `progress`."""
    if progress is None or not hasattr(trt, "IProgressMonitor"):
        return None
    base = trt.IProgressMonitor
    report: Progress = progress

    class Monitor(base):  # type: ignore[misc, valid-type]
        def __init__(self) -> None:
            base.__init__(self)
            self.steps: dict[str, int] = {}

        def phase_start(self, phase_name: str, parent_phase: str | None, num_steps: int) -> None:
            if parent_phase is None:  # the top-level phases only: a line each, not hundreds
                self.steps[phase_name] = num_steps
                report(phase_name, 0, num_steps)

        def step_complete(self, phase_name: str, step: int) -> bool:
            return True  # never cancel

        def phase_finish(self, phase_name: str) -> None:
            if phase_name in self.steps:
                steps = self.steps.pop(phase_name)
                report(phase_name, steps, steps)

    return Monitor()
