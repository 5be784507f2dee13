"""The pure policy: which optimization profile an execution runs under, and in which mode.

This is trt-edge's copy of the decision in Torch-TensorRT's ExecuTorch backend
(`OptimizationProfileSelection.h`): a function over a small table, with no
engine, no runtime and no logging, returning an outcome value that separates
"continue" from "continue, but tell the user" from two distinct failures. The
caller (the runner's emulation, or a native delegate) reports and applies it.
The C++ header `device_runner/cpp/include/trt_edge/profile_selection.h`
implements the same function; both are held to `tests/vectors/profile_selection.json`.
`decide_mode` (end of this file) is the other pure decision, taken once per
bundle: native, emulated or profile 0 only (`tests/vectors/mode_decision.json`,
C++ `trt_edge/mode_decision.h`).

Rules (docs/design.md, "Profile semantics"):

- empty table → NO_PROFILE_MATCHES_INPUTS, whatever the request;
- Default (no guard in scope) → profile 0, no fit check (input validation
  reports a misfit afterwards, as the engine would);
- Auto → sticky first-fit: keep `active` while every input fits, else the
  lowest index that fits, else NO_PROFILE_MATCHES_INPUTS. Where ranges overlap
  the answer depends on history, not on the lowest index; pin when that matters;
- Pinned(i): 0 ≤ i < N → i (no fit check); i > 0 on a single-profile engine →
  0 with PIN_IGNORED_SINGLE_PROFILE (a pin aimed at a multi-profile sibling
  must not fail an engine that could only ever run profile 0); anything else
  (negative, or ≥ N on a multi-profile engine) → REQUESTED_PROFILE_UNAVAILABLE.
- A malformed table (active out of range, a bounds row shorter than the
  inputs, a rank that differs from min's or max's) answers "does not fit"; it
  never raises.

Standard library only: this module ships to devices.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from trt_edge_runner.bundle_format import BundleManifest

Dims = Sequence[int]
RequestKind = Literal["default", "pinned", "auto"]


def as_index(value: object, what: str = "profile index") -> int:
    """`value` as a plain int: any integer type (numpy ints too), never bool or float.

    `bool` is an `int` subclass, so `True` would silently mean profile 1; it is
    rejected like a float is, with a TypeError.
    """
    if type(value) is int:  # the common case, first: guards are built per execution
        return value
    if isinstance(value, bool) or type(value).__name__ in ("bool_", "bool"):
        raise TypeError(f"{what} must be an integer, got a boolean ({value!r})")
    try:
        return operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        raise TypeError(
            f"{what} must be an integer, got {type(value).__name__} ({value!r})"
        ) from None


class Outcome(Enum):
    """The result of one decision: whether execution continues, and what to say."""

    OK = "ok"
    PIN_IGNORED_SINGLE_PROFILE = "pin_ignored_single_profile"
    REQUESTED_PROFILE_UNAVAILABLE = "requested_profile_unavailable"
    NO_PROFILE_MATCHES_INPUTS = "no_profile_matches_inputs"

    @property
    def continues(self) -> bool:
        """True when execution goes on (possibly after a warning)."""
        return self is Outcome.OK or self is Outcome.PIN_IGNORED_SINGLE_PROFILE


@dataclass(frozen=True, slots=True)
class Request:
    """What the calling thread asked for: Default, Pinned(index) or Auto.

    There is no sentinel index for auto: a computed index that came out negative
    must be an error, not a silent request for automatic selection.
    `Request.pinned` takes any integer (negative ones too, so the policy can
    report them); the guard rejects negative indices earlier, at construction.
    """

    kind: RequestKind
    index: int | None = None

    def __post_init__(self) -> None:
        if self.kind not in ("default", "pinned", "auto"):
            raise ValueError(f"request kind must be default, pinned or auto, got {self.kind!r}")
        if self.kind == "pinned":
            object.__setattr__(self, "index", as_index(self.index))
        elif self.index is not None:
            raise ValueError(f"a {self.kind} request carries no index, got {self.index!r}")

    @staticmethod
    def default() -> Request:
        return _DEFAULT

    @staticmethod
    def pinned(index: object) -> Request:
        i = as_index(index)
        return _PINNED[i] if 0 <= i < len(_PINNED) else Request("pinned", i)

    @staticmethod
    def auto() -> Request:
        return _AUTO

    def __str__(self) -> str:
        return f"pinned({self.index})" if self.kind == "pinned" else self.kind


# Requests are immutable values; the common ones are built once, so entering a
# guard costs no dataclass construction on the hot path.
_DEFAULT = Request("default")
_AUTO = Request("auto")
_PINNED = tuple(Request("pinned", i) for i in range(16))


@dataclass(frozen=True, slots=True)
class ProfileBounds:
    """The [min, max] shape envelope one profile allows for one input."""

    min: tuple[int, ...]
    max: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class ProfileTable:
    """Bounds indexed `[profile][input]` and the profile currently active.

    `active` is what a native engine has loaded; the emulating runner keeps it
    with `with_active` after each execution so auto stays sticky.
    """

    bounds: tuple[tuple[ProfileBounds, ...], ...]
    active: int = 0

    def __len__(self) -> int:
        return len(self.bounds)

    def with_active(self, active: int) -> ProfileTable:
        return ProfileTable(self.bounds, active)

    @classmethod
    def from_bundle(cls, manifest: BundleManifest, active: int = 0) -> ProfileTable:
        """The table a bundle's recorded profiles describe, inputs in `io.inputs` order."""
        return cls(
            bounds=tuple(
                tuple(ProfileBounds(lo, hi) for lo, hi in profile.bounds(manifest.inputs))
                for profile in manifest.profiles
            ),
            active=active,
        )


@dataclass(frozen=True, slots=True)
class Selection:
    """An outcome and, when execution continues, the profile to run."""

    outcome: Outcome
    profile: int | None


_OK = tuple(Selection(Outcome.OK, p) for p in range(16))
_PIN_IGNORED = Selection(Outcome.PIN_IGNORED_SINGLE_PROFILE, 0)
_UNAVAILABLE = Selection(Outcome.REQUESTED_PROFILE_UNAVAILABLE, None)
_NO_MATCH = Selection(Outcome.NO_PROFILE_MATCHES_INPUTS, None)


def _ok(profile: int) -> Selection:
    # Selections are immutable values; the common ones are shared to keep the
    # per-call cost of the hot path (one decision per execution) small.
    return _OK[profile] if profile < len(_OK) else Selection(Outcome.OK, profile)


def profile_fits(table: ProfileTable, profile: int, input_dims: Sequence[Dims]) -> bool:
    """Whether `profile` accepts every input; an index or row the table lacks does not fit.

    An input fits when it has the rank of both `min` and `max` and every extent
    lies within [min, max]. Plain indexed loops, no per-input method call or
    generator: this runs once per profile tried per execution, and the Python
    budget is a few µs.
    """
    if profile < 0 or profile >= len(table.bounds):
        return False
    row = table.bounds[profile]
    if len(row) < len(input_dims):
        return False
    for i, dims in enumerate(input_dims):
        bounds = row[i]
        lo, hi = bounds.min, bounds.max
        rank = len(dims)
        if rank != len(lo) or rank != len(hi):
            return False
        for k in range(rank):
            d = dims[k]
            if d < lo[k] or d > hi[k]:
                return False
    return True


def select_profile(table: ProfileTable, request: Request, input_dims: Sequence[Dims]) -> Selection:
    """Resolve one request against one engine's table for one execution's input shapes."""
    count = len(table.bounds)
    if count == 0:
        return _NO_MATCH
    kind = request.kind
    if kind == "default":
        return _OK[0]
    if kind == "auto":
        active = table.active
        if profile_fits(table, active, input_dims):
            return _ok(active)
        for p in range(count):
            if p != active and profile_fits(table, p, input_dims):
                return _ok(p)
        return _NO_MATCH
    index = request.index
    assert index is not None, "a pinned request carries an index"
    if 0 <= index < count:
        return _ok(index)
    if index > 0 and count == 1:
        return _PIN_IGNORED
    return _UNAVAILABLE


# ---- how a bundle runs here: native, emulated, or profile 0 only ----------------

Mode = Literal["native", "emulated"]
Notice = Literal["tensorrt_without_native_guard", "policy_ignored"]

# Backend id under which Torch-TensorRT's ExecuTorch delegate registers (and lowers).
TENSORRT_BACKEND_ID = "TensorRTBackend"


@dataclass(frozen=True, slots=True)
class ModeDecision:
    """How a bundle runs on this runner, and the one notice to give when that degrades it.

    `notice` is a code (the vectors compare it); `message` is the sentence a
    runner logs once, at open.
    """

    mode: Mode
    profile0_only: bool
    notice: Notice | None
    message: str | None


def decide_mode(
    delegate_backends: Sequence[str],
    profile_count: int,
    *,
    native_guard: bool,
    honour_policy: bool,
) -> ModeDecision:
    """Native, emulated, or profile 0 only — from the bundle's delegates and this runner.

    Pure, so every branch is tested without a TensorRT install, and the C++ runner
    (`trt_edge/mode_decision.h`) decides the same, case for case
    (`tests/vectors/mode_decision.json`). Native needs TensorRT delegates *and* a
    native guard in this runner; TensorRT delegates without one can only run
    profile 0 (the engine ignores any request), which a multi-profile bundle must
    say once; `honour_policy=False` behaves the same on purpose (an old runner).
    CPU delegates are always emulated: the runner itself is the policy. Whatever
    the mode, the runner selects and validates against the bundle's profile table.
    """
    has_trt = TENSORRT_BACKEND_ID in delegate_backends
    multi = profile_count > 1
    mode: Mode = "native" if has_trt and native_guard else "emulated"
    if has_trt and not native_guard and multi:
        return ModeDecision(
            mode,
            True,
            "tensorrt_without_native_guard",
            f"{profile_count} optimization profiles, but this runner has no native TensorRT "
            "profile guard: running profile 0 only (every phase and pin uses profile 0)",
        )
    if not honour_policy:
        if not multi:
            return ModeDecision(mode, True, None, None)
        return ModeDecision(
            mode,
            True,
            "policy_ignored",
            "policy ignored on request (honour_policy=False): running profile 0 only",
        )
    return ModeDecision(mode, False, None, None)
