"""The Python runner: open a bundle, then execute its method under a profile request.

One execution, in order (docs/design.md "Profile semantics"): collect every input's
dims → select a profile for the request in scope (phase, pin, auto or default)
→ validate every input against it (and, when asked, integer values against the
bundle's `values`) → execute → outputs. Everything that can be refused is
refused before the ExecuTorch method runs, with a `RunnerError` naming the input,
dim, value and allowed range.

Where the parts live (docs/design.md "Runner: decide, apply, or emulate"): the pure
policy and the mode decision in `policy.py`, emulation (select, validate, sticky
auto, warn once) in `emulation.py`, the actuator — a native TensorRT profile
guard, which no Python runtime has — in `actuator.py`, the integrity rule and
the one `bundle.json` reader in `bundle_integrity.py`, the runtime's stderr
noise filter in `runtime_stderr.py`. This module opens a bundle and executes.

Every bundle runs **emulated** here: the runner enforces selection and
validation itself against the profile table recorded in `bundle.json`. On CPU
backends (XNNPACK, portable) the program was exported over the union of all
profiles, so emulation rejects exactly what a device would reject. A
multi-profile bundle with TensorRT delegates can only ever run profile 0 in
Python (no native guard): the runner says so once, at open, and then treats
every request as Default (profile 0, validated) — as does a runner opened with
`honour_policy=False` (how a runner without profile support behaves).

Thread safety: guards are per thread (`trt_edge_runner.guard`), so two threads
can run different phases on one `Runner`. An ExecuTorch method is not reentrant
(its planned memory is shared between calls) and auto selection is sticky per
engine, so each `Runner` serialises select + execute behind one lock. Threads
that need parallel execution open one `Runner` each.
"""

from __future__ import annotations

import contextlib
import copy
import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trt_edge_runner.actuator import NATIVE_PROFILE_GUARD
from trt_edge_runner.bundle_format import BUNDLE_JSON, MODEL_PTE, BundleManifest, rtx_refusal
from trt_edge_runner.bundle_integrity import read_manifest, verify_directory
from trt_edge_runner.dtypes import NUMPY_WIDENING, dtype_info
from trt_edge_runner.emulation import ProfileResolver
from trt_edge_runner.errors import (
    ExecutionError,
    InputSpecError,
    InputValueError,
    ProgramLoadError,
    RunnerError,
    RuntimeUnavailableError,
)
from trt_edge_runner.guard import OptimizationProfileGuard, PhaseGuard, current_request
from trt_edge_runner.policy import Mode, Outcome, Request, Selection, decide_mode
from trt_edge_runner.runtime_stderr import quiet_runtime_stderr, runtime_logs_wanted

if TYPE_CHECKING:
    import numpy.typing as npt

log = logging.getLogger("trt_edge_runner.runner")

Target = str | int | Request


@dataclass(frozen=True)
class RunResult:
    """What one execution produced and under which profile.

    `seconds` is the wall time of the whole call (select, validate, execute,
    output conversion): what a caller of the runner waits for.
    """

    outputs: list[npt.NDArray[Any]]
    profile: int
    outcome: Outcome
    seconds: float
    request: Request = field(default_factory=Request.default)


def _load_extra_kernels() -> None:
    """Register the ExecuTorch kernels a bundle's program may call outside its delegates
    that the Python runtime does not carry by default: the quantized ones (e.g.
    `quantized_decomposed::embedding_4bit`, a quantized bundle) and the LLM ones
    (`llama::custom_sdpa`, a bundle built with `attention: fused`). Importing the modules
    loads them; a runtime without them fails the load naming the missing kernel."""
    with contextlib.suppress(ImportError):
        import executorch.kernels.quantized
    with contextlib.suppress(ImportError):
        import executorch.extension.llm.custom_ops.custom_ops  # noqa: F401


def _load_method(runtime: Any, pte: Path, ptd: Path, method_name: str) -> Any:
    """Load `method_name` of `pte` (with its `.ptd` when present) or ProgramLoadError."""
    try:
        program = runtime.load_program(pte, data_path=ptd if ptd.exists() else None)
    except (RuntimeError, ValueError) as exc:
        raise ProgramLoadError(
            f"{pte}: the ExecuTorch runtime could not load it ({exc}); the file may be "
            "from an incompatible ExecuTorch version: rebuild the bundle"
        ) from None
    if method_name not in program.method_names:
        raise ProgramLoadError(
            f"{pte}: has no method {method_name!r} (it has "
            f"{', '.join(sorted(program.method_names))}); bundle.json and model.pte disagree"
        )
    try:
        return program.load_method(method_name)
    except RuntimeError as exc:
        raise ProgramLoadError(f"{pte}: loading method {method_name!r} failed: {exc}") from None


class Runner:
    """An opened bundle: its manifest, its loaded ExecuTorch method and its profile state.

    Build with `Runner.open(bundle_dir)`. Execute with `run(target, inputs)`
    (target: a phase name, a profile index, or a `Request`) or inside a guard:
    `with runner.phase("decode"): runner.execute(inputs)`.
    """

    def __init__(
        self,
        bundle_dir: Path,
        manifest: BundleManifest,
        method: Any,
        *,
        mode: Mode,
        profile0_only: bool,
        check_values: bool,
        backends: tuple[str, ...],
    ) -> None:
        import torch

        self.bundle_dir = bundle_dir
        self.manifest = manifest
        self.mode: Mode = mode
        self.profile0_only = profile0_only
        self.check_values = check_values
        self.backends = backends
        self.last_profile: int | None = None
        self._method = method
        self._resolver = ProfileResolver.from_bundle(manifest)
        self._lock = threading.Lock()
        self._torch = torch
        self._names = [spec.name for spec in manifest.inputs]
        self._dtypes = []
        for spec in manifest.inputs:
            info = dtype_info(spec.dtype)
            if info is None:
                raise InputSpecError(
                    f"{bundle_dir / BUNDLE_JSON}: input {spec.name!r} has dtype {spec.dtype!r}, "
                    "which this runner cannot feed"
                )
            self._dtypes.append(getattr(torch, info.torch))
        # numpy has no bfloat16: such outputs are widened (exactly) to float32.
        self._widen = {getattr(torch, k): getattr(torch, v) for k, v in NUMPY_WIDENING.items()}
        # (input, dim, symbol) triples: one symbol must take one value per execution.
        self._symbol_dims = [
            (i, d, sym)
            for i, spec in enumerate(manifest.inputs)
            for d, sym in enumerate(spec.shape)
            if isinstance(sym, str)
        ]
        self._valued = [
            (i, spec.name, spec.values)
            for i, spec in enumerate(manifest.inputs)
            if spec.values is not None
        ]
        # A causal LM's cache slots: (input index, name, max_cache_len), checked every call.
        self._cache_positions: tuple[int, str, int] | None = None
        # With `attention: filled`: (input index, name) of the attended window.
        self._cache_window: tuple[int, str] | None = None
        if manifest.llm is not None and manifest.llm.window_input is not None:
            window = manifest.llm.window_input
            self._cache_window = (self._names.index(window), window)
        # With slots (llm version 3): (input index, name, slots) of the slot input.
        self._cache_slots: tuple[int, str, int] | None = None
        if manifest.llm is not None and manifest.llm.slot_input is not None:
            slot = manifest.llm.slot_input
            self._cache_slots = (self._names.index(slot), slot, manifest.llm.slots)
        if manifest.llm is not None:
            llm = manifest.llm
            self._cache_positions = (
                self._names.index(llm.positions_input),
                llm.positions_input,
                llm.max_cache_len,
            )
        # Phase requests resolved once: an unknown phase is found per call by lookup.
        self._phase_requests = {
            phase: PhaseGuard(manifest.runtime, phase).request for phase in manifest.runtime.phases
        }

    # ---- opening ---------------------------------------------------------
    @classmethod
    def open(
        cls,
        bundle_dir: Path | str,
        *,
        verify_files: bool = True,
        check_values: bool = False,
        honour_policy: bool = True,
        runtime_logs: bool | None = None,
    ) -> Runner:
        """Verify, load and prepare a bundle; every problem is a RunnerError before any run.

        `runtime_logs`: show the ExecuTorch runtime's informational stderr lines
        while loading (default: $TRT_EDGE_RUNTIME_LOGS; see quiet_runtime_stderr).
        """
        bundle_dir = Path(bundle_dir)
        _, manifest = read_manifest(bundle_dir)
        if verify_files:
            verify_directory(bundle_dir, manifest)
        try:
            import torch  # noqa: F401  (the runtime's tensors)
            from executorch.runtime import Runtime
        except ImportError as exc:
            raise RuntimeUnavailableError(
                f"the ExecuTorch runtime is not installed ({exc}); install "
                "trt-edge-runner[run] (executorch, numpy) on this device"
            ) from None
        if manifest.quantization is not None or manifest.llm is not None:
            _load_extra_kernels()
        refusal = rtx_refusal(str(bundle_dir / MODEL_PTE), manifest.delegates)
        if refusal is not None:
            raise ProgramLoadError(refusal)
        runtime = Runtime.get()
        backends = tuple(runtime.backend_registry.registered_backend_names)
        needed = sorted({d.backend_id for d in manifest.delegates} - set(backends))
        if needed:
            raise ProgramLoadError(
                f"{bundle_dir / MODEL_PTE}: needs backend(s) {', '.join(needed)}, but this "
                f"runtime registers only {', '.join(backends) or 'none'}; run the bundle on a "
                f"device whose ExecuTorch build has them, or rebuild for target "
                f"{manifest.target.get('id', 'cpu-x86_64')!s}"
            )
        pte = bundle_dir / MODEL_PTE
        ptd = bundle_dir / "model.ptd"
        with quiet_runtime_stderr(show_all=runtime_logs_wanted(runtime_logs)):
            method = _load_method(runtime, pte, ptd, manifest.method)
        num_inputs = method.metadata.num_inputs()
        if num_inputs != len(manifest.inputs):
            raise ProgramLoadError(
                f"{pte}: method {manifest.method!r} takes {num_inputs} inputs but "
                f"{BUNDLE_JSON} describes {len(manifest.inputs)}; rebuild the bundle"
            )

        decision = decide_mode(
            [d.backend_id for d in manifest.delegates],
            len(manifest.profiles),
            native_guard=NATIVE_PROFILE_GUARD,
            honour_policy=honour_policy,
        )
        if decision.message:
            log.warning("%s: %s", bundle_dir, decision.message)
        return cls(
            bundle_dir,
            manifest,
            method,
            mode=decision.mode,
            profile0_only=decision.profile0_only,
            check_values=check_values,
            backends=backends,
        )

    # ---- requests ----------------------------------------------------------
    @property
    def phases(self) -> tuple[str, ...]:
        return tuple(self.manifest.runtime.phases)

    def phase(self, name: str) -> PhaseGuard:
        """A guard requesting what the bundle's policy says for phase `name` (this thread)."""
        return PhaseGuard(self.manifest.runtime, name)

    def pinned(self, index: int) -> OptimizationProfileGuard:
        return OptimizationProfileGuard(index)

    def automatic(self) -> OptimizationProfileGuard:
        return OptimizationProfileGuard.automatic()

    def request_for(self, target: Target) -> Request:
        """A phase name, a profile index or a Request, as a Request (errors for bad ones)."""
        if isinstance(target, Request):
            return target
        if isinstance(target, str):
            request = self._phase_requests.get(target)
            if request is None:
                return PhaseGuard(self.manifest.runtime, target).request  # raises, naming phases
            return request
        return OptimizationProfileGuard(target).request

    def release(self) -> None:
        """Drop the loaded program now (its constants, the delegates' packed weights and its
        planned memory) rather than when the last reference goes: a caller that has more to do
        after its last execution (a build's validation, which then loads the eager model) need
        not hold both. Executing afterwards raises ExecutionError."""
        with self._lock:
            self._method = None

    # ---- execution ---------------------------------------------------------
    def run(
        self, target: Target, inputs: Sequence[Any], *, check_values: bool | None = None
    ) -> RunResult:
        """Execute once under `target` (phase, index or Request)."""
        return self._execute(self.request_for(target), inputs, check_values)

    def execute(self, inputs: Sequence[Any], *, check_values: bool | None = None) -> RunResult:
        """Execute once under the request in scope on this thread (Default when none)."""
        return self._execute(current_request(), inputs, check_values)

    def check(
        self, target: Target, inputs: Sequence[Any], *, check_values: bool | None = None
    ) -> Selection:
        """Everything `run` does before executing — conversion, checks, selection — and no more.

        Answers "would this run, and on which profile?" with the same errors `run`
        raises, without executing and without moving the sticky auto state (the
        decision is taken on a copy of this engine's profile state). The
        benchmark also uses it to time the runner's own per-call work.
        """
        request = Request.default() if self.profile0_only else self.request_for(target)
        _, dims = self._prepare(inputs, check_values)
        with self._lock:
            return copy.copy(self._resolver).resolve(request, dims)

    def _prepare(
        self, inputs: Sequence[Any], check_values: bool | None
    ) -> tuple[list[Any], list[tuple[int, ...]]]:
        tensors = self._tensors(inputs)
        dims = [tuple(t.shape) for t in tensors]
        self._check_symbols(dims)
        if self._cache_positions is not None:
            self._check_cache_positions(tensors)
        if self._cache_slots is not None:
            self._check_cache_slots(tensors)
        if self.check_values if check_values is None else check_values:
            self._check_values(tensors)
        return tensors, dims

    def _check_cache_positions(self, tensors: list[Any]) -> None:
        """Every cache slot a call writes must exist: `0 <= start` and `start + seq <=
        max_cache_len`. Past the cache, ExecuTorch fails inside `index_put` with an
        opaque error (0x12), so the runner refuses first, naming the range."""
        assert self._cache_positions is not None
        index, name, cache_len = self._cache_positions
        positions = tensors[index]
        if positions.numel() == 0:
            return
        low, high = int(positions.min()), int(positions.max())
        if low >= 0 and high < cache_len:
            self._check_cache_window(tensors, high)
            return
        seq = int(positions.numel())
        start = int(positions.flatten()[0])
        bad = low if low < 0 else high
        raise InputValueError(
            f"input {name!r} holds position {bad} (start {start}, seq {seq}): the KV cache "
            f"has positions [0, {cache_len}) (bundle.json llm.max_cache_len {cache_len}); a "
            f"call needs start >= 0 and start + seq <= {cache_len}: start a new sequence at "
            "position 0, or rebuild with a larger model.huggingface.max_cache_len"
        )

    def _check_cache_slots(self, tensors: list[Any]) -> None:
        """Each row names one of the program's KV caches, each at most once: a slot outside
        them would write outside the cache buffers, one named twice would mix two rows."""
        assert self._cache_slots is not None
        index, name, count = self._cache_slots
        slots = [int(v) for v in tensors[index].flatten().tolist()]
        outside = [v for v in slots if not 0 <= v < count]
        if outside:
            raise InputValueError(
                f"input {name!r} names slot {outside[0]}: the program holds slots [0, {count}) "
                f"(bundle.json llm.slots {count}); name one of them"
            )
        if len(set(slots)) != len(slots):
            twice = next(v for v in slots if slots.count(v) > 1)
            raise InputValueError(
                f"input {name!r} names slot {twice} twice: each row of a call is its own "
                "conversation, in its own slot"
            )

    def _check_cache_window(self, tensors: list[Any], high: int) -> None:
        """The attended window must hold every position the call writes: a query whose own
        slot lies past the window would attend without itself, silently wrong."""
        if self._cache_window is None:
            return
        index, name = self._cache_window
        length = int(tensors[index].shape[0])
        if length > high:
            return
        raise InputValueError(
            f"input {name!r} has length {length}, but the call writes position {high}: the "
            f"attended window must cover positions [0, {high + 1}); feed "
            "llm.window_length(start + seq) slots (bundle.json llm.inputs.window)"
        )

    def _execute(
        self, request: Request, inputs: Sequence[Any], check_values: bool | None
    ) -> RunResult:
        started = time.perf_counter()
        if self.profile0_only:
            request = Request.default()
        tensors, dims = self._prepare(inputs, check_values)
        with self._lock:
            selection = self._resolver.resolve(request, dims)
            profile = selection.profile
            assert profile is not None
            if self._method is None:
                raise ExecutionError(
                    f"{self.bundle_dir / MODEL_PTE}: this runner was released; "
                    "open the bundle again"
                )
            try:
                raw = self._method.execute(tensors)
            except RuntimeError as exc:
                raise ExecutionError(
                    f"{self.bundle_dir / MODEL_PTE}: method {self.manifest.method!r} failed on "
                    f"profile {profile} with shapes {self._shapes(dims)}: {exc}"
                ) from None
            self.last_profile = profile
        outputs = [self._to_numpy(o) for o in raw]
        return RunResult(
            outputs=outputs,
            profile=profile,
            outcome=selection.outcome,
            seconds=time.perf_counter() - started,
            request=request,
        )

    def _to_numpy(self, value: Any) -> Any:
        if not hasattr(value, "numpy"):
            return value
        wider = self._widen.get(value.dtype)
        return (value.to(wider) if wider is not None else value).numpy()

    def _tensors(self, inputs: Sequence[Any]) -> list[Any]:
        torch = self._torch
        if len(inputs) != len(self._dtypes):
            raise InputSpecError(
                f"{self.manifest.name}: {len(inputs)} input(s) passed, the bundle's method "
                f"takes {len(self._dtypes)}: {', '.join(self._names)} (in this order)"
            )
        tensors = []
        for i, (value, dtype) in enumerate(zip(inputs, self._dtypes, strict=True)):
            tensor = value if isinstance(value, torch.Tensor) else self._from_array(value, i)
            if tensor.dtype != dtype:
                raise InputSpecError(
                    f"input {self._names[i]!r} has dtype {str(tensor.dtype).removeprefix('torch.')}"
                    f", the bundle expects {self.manifest.inputs[i].dtype}; convert it first"
                )
            tensors.append(tensor)
        return tensors

    def _from_array(self, value: Any, i: int) -> Any:
        import numpy as np

        try:
            array = np.asarray(value)
        except (TypeError, ValueError) as exc:
            raise InputSpecError(f"input {self._names[i]!r}: not an array ({exc})") from None
        if not array.flags.c_contiguous or not array.flags.writeable:
            array = np.ascontiguousarray(array).copy()
        try:
            return self._torch.from_numpy(array)
        except TypeError as exc:
            raise InputSpecError(f"input {self._names[i]!r}: unsupported array ({exc})") from None

    def _check_symbols(self, dims: list[tuple[int, ...]]) -> None:
        seen: dict[str, tuple[int, int]] = {}
        for i, d, sym in self._symbol_dims:
            shape = dims[i]
            if d >= len(shape):
                continue  # rank errors are reported by the profile check, with ranges
            value = shape[d]
            first = seen.setdefault(sym, (value, i))
            if first[0] != value:
                raise InputSpecError(
                    f"symbol {sym!r} is {first[0]} in input {self._names[first[1]]!r} but "
                    f"{value} in input {self._names[i]!r} (dim {d}); inputs sharing a symbol "
                    "must agree"
                )

    def _check_values(self, tensors: list[Any]) -> None:
        for i, name, (low, high) in self._valued:
            tensor = tensors[i]
            if tensor.numel() == 0:
                continue
            bad = (tensor < low) | (tensor >= high)
            if bool(bad.any()):
                flat = int(bad.flatten().nonzero()[0, 0])
                index = tuple(int(x) for x in _unravel(flat, tuple(tensor.shape)))
                value = int(tensor.flatten()[flat])
                raise InputValueError(
                    f"input {name!r}{list(index)} = {value} is outside its declared values "
                    f"[{low}, {high}); pass values in range (bundle io.inputs values)"
                )

    @staticmethod
    def _shapes(dims: list[tuple[int, ...]]) -> str:
        return ", ".join("[" + ", ".join(str(d) for d in s) + "]" for s in dims)

    def describe(self) -> dict[str, Any]:
        """Facts for `info`/`--json`: mode, phases, profiles, backends."""
        return {
            "bundle": str(self.bundle_dir),
            "model": {"name": self.manifest.name, "version": self.manifest.version},
            "mode": self.mode,
            "profile0_only": self.profile0_only,
            "phases": dict(self.manifest.runtime.phases),
            "profiles": [p.name for p in self.manifest.profiles],
            "backends_registered": list(self.backends),
        }


def _unravel(flat: int, shape: tuple[int, ...]) -> list[int]:
    index = []
    for extent in reversed(shape):
        index.append(flat % extent if extent else 0)
        flat = flat // extent if extent else 0
    return list(reversed(index))


__all__ = [
    "Mode",
    "RunResult",
    "Runner",
    "RunnerError",
    "Target",
]
