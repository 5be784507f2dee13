"""Scoped, thread-local profile requests: `OptimizationProfileGuard` and `PhaseGuard`.

Modelled on the guard of Torch-TensorRT's ExecuTorch backend: a guard only
records a request for the current thread and restores the enclosing one on
exit (nesting, exceptions). It never looks at a model, a method or an engine;
whoever executes reads `current_request()` and resolves it against its own
profile table (`policy.select_profile`). That keeps one execution's request
consistent across every delegate and lets two threads run different phases
without seeing each other's requests.

    with OptimizationProfileGuard(1):                 # pin profile 1
        runner.execute(prefill_inputs)
    with OptimizationProfileGuard.automatic():        # choose from input shapes
        runner.execute(decode_inputs)
    with PhaseGuard(manifest.runtime, "decode"):      # phase → index or auto
        runner.execute(decode_inputs)

Standard library only: this module ships to devices.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from types import TracebackType

from trt_edge_runner.bundle_format import RuntimePolicy
from trt_edge_runner.errors import RequestedProfileUnavailableError, UnknownPhaseError
from trt_edge_runner.policy import Request, as_index


class _RequestSlot(threading.local):
    """Each thread starts with the Default request (no guard in scope)."""

    request: Request = Request.default()


_slot = _RequestSlot()


def current_request() -> Request:
    """The innermost request in scope on the calling thread (Default when none)."""
    return _slot.request


class _ScopedRequest:
    """Installs `self.request` on enter and restores the enclosing request on exit.

    One instance may be entered again after it exits, and even re-entered while
    active (each enter remembers its own enclosing request).
    """

    __slots__ = ("_saved", "request")

    def __init__(self, request: Request) -> None:
        self.request = request
        self._saved: list[Request] = []

    def __enter__(self) -> Request:
        self._saved.append(_slot.request)
        _slot.request = self.request
        return self.request

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        _slot.request = self._saved.pop()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.request})"


class OptimizationProfileGuard(_ScopedRequest):
    """Pin a profile by index for the enclosed executions on this thread.

    The index is the profile's position in the manifest's ordered list. Any
    integer type is accepted (numpy ints too); `bool` and floats raise
    TypeError, and a negative index raises ValueError here, at construction,
    rather than reaching an engine. An index the engine lacks is reported when
    it executes (`RequestedProfileUnavailableError`), since the guard never
    sees an engine. Use `OptimizationProfileGuard.automatic()` for shape-based
    selection: there is deliberately no sentinel index for it.
    """

    __slots__ = ()

    def __init__(self, index: int) -> None:
        # Built once per execution: Request.pinned hands out shared values for small
        # indices, so the common case builds nothing.
        value = as_index(index)
        if value < 0:
            raise ValueError(
                f"profile index must be >= 0, got {value}; "
                "use OptimizationProfileGuard.automatic() for shape-based selection"
            )
        self.request = Request.pinned(value)
        self._saved = []

    @classmethod
    def automatic(cls) -> OptimizationProfileGuard:
        """A guard requesting sticky first-fit selection from the input shapes."""
        guard = cls.__new__(cls)
        _ScopedRequest.__init__(guard, Request.auto())
        return guard


class PhaseGuard(_ScopedRequest):
    """Request what a bundle's runtime policy says for `phase` (an index or auto).

    Phases come from the bundle (`runtime.phases`), never from code, so the
    same application code runs a re-tuned bundle unchanged. An unknown phase
    raises `UnknownPhaseError` naming the phases that exist.
    """

    __slots__ = ("phase",)

    def __init__(self, policy: RuntimePolicy, phase: str) -> None:
        try:
            target = policy.phases[phase]
        except KeyError:
            raise UnknownPhaseError(
                f"unknown phase {phase!r}: the bundle's runtime policy defines "
                f"{_names(policy.phases)}; use one of them, or add it to the manifest's "
                "runtime.phases and rebuild the bundle"
            ) from None
        if target == "auto":
            request = Request.auto()
        else:
            index = as_index(target, f"runtime.phases.{phase}")
            if index < 0:
                raise RequestedProfileUnavailableError(
                    f"phase {phase!r} pins profile {index}, but a profile index is never "
                    "negative; fix runtime.phases in the manifest and rebuild the bundle"
                )
            request = Request.pinned(index)
        super().__init__(request)
        self.phase = phase


def _names(phases: Mapping[str, object]) -> str:
    return ", ".join(repr(p) for p in phases) if phases else "no phases"
