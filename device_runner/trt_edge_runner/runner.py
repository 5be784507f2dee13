"""The Python runner: open a bundle, then execute its method under a profile request.

One execution, in order (DESIGN.md "Profile semantics"): collect every input's
dims → select a profile for the request in scope (phase, pin, auto or default)
→ validate every input against it (and, when asked, integer values against the
bundle's `values`) → execute → outputs. Everything that can be refused is
refused before the ExecuTorch method runs, with a `RunnerError` naming the input,
dim, value and allowed range.

Mode (DESIGN.md "Runner: decide, apply, or emulate"):

- **native**: the bundle has TensorRT delegates and the installed Torch-TensorRT
  ExecuTorch backend exposes its thread-local `OptimizationProfileGuard` to
  Python; the runner still selects and validates (same policy, clear errors),
  then also sets the native request on the executing thread.
- **emulated**: everything else. The runner enforces selection and validation
  itself against the profile table recorded in `bundle.json`. On CPU backends
  (XNNPACK, portable) the program was exported over the union of all profiles,
  so emulation rejects exactly what a device would reject.
- A multi-profile bundle with TensorRT delegates but no native guard (an older
  backend) can only ever run profile 0: the runner says so once, at open, and
  then treats every request as Default (profile 0, validated) — as does a runner
  opened with `honour_policy=False` (how a runner without profile support behaves).

Thread safety: guards are per thread (`trt_edge_runner.guard`), so two threads
can run different phases on one `Runner`. An ExecuTorch method is not reentrant
(its planned memory is shared between calls) and auto selection is sticky per
engine, so each `Runner` serialises select + execute behind one lock. Threads
that need parallel execution open one `Runner` each.
"""

from __future__ import annotations

import copy
import importlib
import logging
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, Literal

from trt_edge_runner.bundle_format import (
    BUNDLE_JSON,
    MODEL_PTE,
    BundleFormatError,
    BundleManifest,
    file_sha256,
)
from trt_edge_runner.errors import (
    BundleFormatMismatchError,
    BundleIntegrityError,
    ExecutionError,
    InputSpecError,
    InputValueError,
    ProgramLoadError,
    RunnerError,
    RuntimeUnavailableError,
)
from trt_edge_runner.guard import OptimizationProfileGuard, PhaseGuard, current_request
from trt_edge_runner.input_check import ProfileResolver
from trt_edge_runner.policy import Outcome, Request, Selection

if TYPE_CHECKING:
    import numpy.typing as npt

log = logging.getLogger("trt_edge_runner.runner")

Mode = Literal["native", "emulated"]
Target = str | int | Request

# Backend id under which Torch-TensorRT's ExecuTorch delegate registers (and lowers).
TENSORRT_BACKEND_ID = "TensorRTBackend"
# Where a native Python binding of the guard would live; upstream exposes it in C++
# only (an open pull request), so this lookup honestly fails on every release so far.
NATIVE_GUARD_MODULE = "torch_tensorrt.executorch"
NATIVE_GUARD_NAME = "OptimizationProfileGuard"


# Set to 1 to see everything the ExecuTorch runtime prints while a bundle loads.
RUNTIME_LOGS_ENV = "TRT_EDGE_RUNTIME_LOGS"
# What XNNPACK's CPU probe prints (via ET_LOG) the first time a method with an
# XNNPACK delegate is loaded: the /sys files it could not read on this machine. It
# is informational, every call, on every x86 box; it drowned the runner's messages.
RUNTIME_NOISE = ("[cpuinfo_utils.cpp:",)


def runtime_logs_wanted(explicit: bool | None = None) -> bool:
    """Whether the runtime's own stderr lines are shown: the flag, else $TRT_EDGE_RUNTIME_LOGS."""
    if explicit is not None:
        return explicit
    return os.environ.get(RUNTIME_LOGS_ENV, "").strip().lower() in ("1", "true", "yes", "on")


_STDERR_CAPTURE_LOCK = threading.Lock()


@contextmanager
def quiet_runtime_stderr(show_all: bool = False) -> Iterator[None]:
    """Hold back the ExecuTorch runtime's known-noise lines on fd 2 for the block.

    The runtime writes from C++ straight to file descriptor 2, below Python's
    `sys.stderr`, so the only way to keep those lines off a terminal is to point
    fd 2 at a temporary file for the (short) load and restore it afterwards.
    Nothing is swallowed but the known XNNPACK CPU-probe lines: every other
    captured line is written back to stderr when the block ends, and everything
    (noise included) when the block raises or `show_all` is set, so a load
    failure still shows what the runtime said. While the block runs, other
    threads' stderr writes are captured and replayed the same way.
    """
    if show_all:
        yield
        return
    sys.stderr.flush()
    # fd 2 is process-wide: two threads opening bundles at once must not save each
    # other's redirection as "the original" (stderr would stay lost), so loads that
    # capture are serialised.
    with _STDERR_CAPTURE_LOCK, tempfile.TemporaryFile() as capture:
        saved = os.dup(2)
        failed = False
        try:
            os.dup2(capture.fileno(), 2)
            try:
                yield
            except BaseException:
                failed = True
                raise
            finally:
                sys.stderr.flush()
                os.dup2(saved, 2)
        finally:
            os.close(saved)
            capture.seek(0)
            lines = capture.read().decode("utf-8", errors="replace").splitlines(keepends=True)
            kept = [ln for ln in lines if failed or not ln.lstrip().startswith(RUNTIME_NOISE)]
            if kept:
                sys.stderr.write("".join(kept))
                sys.stderr.flush()


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


def read_bundle_manifest(bundle_dir: Path) -> BundleManifest:
    """`bundle.json` of `bundle_dir`, or a RunnerError saying what is wrong with it."""
    path = bundle_dir / BUNDLE_JSON
    if not bundle_dir.is_dir():
        raise BundleFormatMismatchError(f"{bundle_dir}: not a directory; pass a bundle directory")
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise BundleFormatMismatchError(
            f"{path}: missing; {bundle_dir} is not a trt-edge bundle (build one with "
            "`trt-edge build MANIFEST`)"
        ) from None
    try:
        return BundleManifest.from_json(data, source=str(path))
    except BundleFormatError as exc:
        raise BundleFormatMismatchError(str(exc)) from None


def verify_bundle_files(bundle_dir: Path, manifest: BundleManifest) -> None:
    """Check every listed file's size and sha256 before anything is loaded.

    Size first (cheap, catches truncation), then the digest. The program itself
    must be listed: a bundle.json that does not cover model.pte protects nothing.
    """
    source = bundle_dir / BUNDLE_JSON
    if MODEL_PTE not in manifest.files:
        raise BundleIntegrityError(
            f"{source}: files does not list {MODEL_PTE}; the bundle is incomplete: rebuild it"
        )
    for name, entry in sorted(manifest.files.items()):
        rel = PurePosixPath(name)
        if rel.is_absolute() or ".." in rel.parts or not rel.parts:
            raise BundleIntegrityError(
                f"{source}: files lists {name!r}, which is not a path inside the bundle"
            )
        path = bundle_dir.joinpath(*rel.parts)
        try:
            size = path.stat().st_size
        except FileNotFoundError:
            raise BundleIntegrityError(
                f"{path}: missing, but {BUNDLE_JSON} lists it; copy the whole bundle again"
            ) from None
        if size != entry.size:
            raise BundleIntegrityError(
                f"{path}: size {size} bytes, but {BUNDLE_JSON} records {entry.size}; the file "
                "was truncated or modified: copy the bundle again or rebuild it"
            )
        digest = file_sha256(path)
        if digest != entry.sha256:
            raise BundleIntegrityError(
                f"{path}: sha256 {digest}, but {BUNDLE_JSON} records {entry.sha256}; the file "
                "was modified: refusing to load it (copy the bundle again or rebuild it)"
            )


def native_guard_factory() -> Callable[[Request], AbstractContextManager[Any]] | None:
    """The installed backend's native guard as `request -> context manager`, if it has one.

    Detected, never assumed: the module must import and expose the guard with an
    `automatic()` constructor. Returns None otherwise (always, today).
    """
    try:
        module = importlib.import_module(NATIVE_GUARD_MODULE)
    except Exception:  # ImportError, or libnvinfer missing (OSError) on import
        return None
    guard_cls = getattr(module, NATIVE_GUARD_NAME, None)
    if guard_cls is None or not callable(getattr(guard_cls, "automatic", None)):
        return None

    def enter(request: Request) -> AbstractContextManager[Any]:
        if request.kind == "auto":
            return guard_cls.automatic()  # type: ignore[no-any-return]
        if request.kind == "pinned":
            return guard_cls(request.index)  # type: ignore[no-any-return]
        from contextlib import nullcontext

        return nullcontext()

    return enter


@dataclass(frozen=True)
class ModeDecision:
    """How a bundle will run here, and the one notice to log when that is a degradation."""

    mode: Mode
    profile0_only: bool
    notice: str | None


def decide_mode(
    manifest: BundleManifest, *, native_guard: bool, honour_policy: bool
) -> ModeDecision:
    """Native, emulated, or profile 0 only — from the bundle's delegates and this runtime.

    Pure, so every branch is tested without a TensorRT install: native needs
    TensorRT delegates *and* the native guard; TensorRT delegates without the
    guard can only run profile 0 (the engine ignores any request), which a
    multi-profile bundle must say once; `honour_policy=False` behaves the same
    on purpose. CPU delegates are always emulated: the runner is the policy.
    """
    has_trt = any(d.backend_id == TENSORRT_BACKEND_ID for d in manifest.delegates)
    multi = len(manifest.profiles) > 1
    mode: Mode = "native" if has_trt and native_guard else "emulated"
    if has_trt and not native_guard and multi:
        return ModeDecision(
            mode,
            True,
            f"{len(manifest.profiles)} optimization profiles, but the installed TensorRT backend "
            "has no profile guard: running profile 0 only (every phase and pin uses profile 0)",
        )
    if not honour_policy:
        notice = (
            "policy ignored on request (honour_policy=False): running profile 0 only"
            if multi
            else None
        )
        return ModeDecision(mode, True, notice)
    return ModeDecision(mode, False, None)


_TORCH_DTYPES = {
    "float32": "float32",
    "float16": "float16",
    "bfloat16": "bfloat16",
    "float64": "float64",
    "int64": "int64",
    "int32": "int32",
    "int16": "int16",
    "int8": "int8",
    "uint8": "uint8",
    "bool": "bool",
}


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
        native_guard: Callable[[Request], AbstractContextManager[Any]] | None,
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
        self._native_guard = native_guard
        self._resolver = ProfileResolver.from_bundle(manifest)
        self._lock = threading.Lock()
        self._torch = torch
        self._names = [spec.name for spec in manifest.inputs]
        self._dtypes = []
        for spec in manifest.inputs:
            name = _TORCH_DTYPES.get(spec.dtype)
            if name is None:
                raise InputSpecError(
                    f"{bundle_dir / BUNDLE_JSON}: input {spec.name!r} has dtype {spec.dtype!r}, "
                    "which this runner cannot feed"
                )
            self._dtypes.append(getattr(torch, name))
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
        manifest = read_bundle_manifest(bundle_dir)
        if verify_files:
            verify_bundle_files(bundle_dir, manifest)
        try:
            import torch  # noqa: F401  (the runtime's tensors)
            from executorch.runtime import Runtime
        except ImportError as exc:
            raise RuntimeUnavailableError(
                f"the ExecuTorch runtime is not installed ({exc}); install "
                "trt-edge-runner[run] (executorch, numpy) on this device"
            ) from None
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

        has_trt = any(d.backend_id == TENSORRT_BACKEND_ID for d in manifest.delegates)
        native = native_guard_factory() if has_trt else None
        decision = decide_mode(
            manifest, native_guard=native is not None, honour_policy=honour_policy
        )
        if decision.notice:
            log.warning("%s: %s", bundle_dir, decision.notice)
        mode = decision.mode
        profile0_only = decision.profile0_only
        return cls(
            bundle_dir,
            manifest,
            method,
            mode=mode,
            profile0_only=profile0_only,
            check_values=check_values,
            native_guard=native,
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
        if self.check_values if check_values is None else check_values:
            self._check_values(tensors)
        return tensors, dims

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
            try:
                if self._native_guard is not None:
                    with self._native_guard(request):
                        raw = self._method.execute(tensors)
                else:
                    raw = self._method.execute(tensors)
            except RuntimeError as exc:
                raise ExecutionError(
                    f"{self.bundle_dir / MODEL_PTE}: method {self.manifest.method!r} failed on "
                    f"profile {profile} with shapes {self._shapes(dims)}: {exc}"
                ) from None
            self.last_profile = profile
        outputs = [o.numpy() if hasattr(o, "numpy") else o for o in raw]
        return RunResult(
            outputs=outputs,
            profile=profile,
            outcome=selection.outcome,
            seconds=time.perf_counter() - started,
            request=request,
        )

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
    "ModeDecision",
    "RunResult",
    "Runner",
    "RunnerError",
    "decide_mode",
    "native_guard_factory",
    "read_bundle_manifest",
    "verify_bundle_files",
]
