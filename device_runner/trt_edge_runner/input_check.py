"""Input validation against the selected profile, and one engine's resolve step.

`select_profile` (policy.py) only decides; this module turns its outcome into
what a user sees: a `ProfileMismatchError` naming the input, the dim, the value
and the allowed range (for "no profile matches", every profile's ranges), a
`RequestedProfileUnavailableError` for a pin the engine lacks, and the
"pin ignored" warning.

Where the warn-once lives: in `ProfileResolver`, one per engine (the runner
opens one per loaded program, as a native delegate holds one per engine). A
single-profile engine under a nonzero pin would otherwise log on every call of
a decode loop; the policy itself stays pure and never logs.

Order inside an execution (DESIGN.md): collect all input dims → select →
validate every input against the selected profile → switch if it changed.

Standard library only: this module ships to devices.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from trt_edge_runner.errors import ProfileMismatchError, RequestedProfileUnavailableError
from trt_edge_runner.policy import (
    Dims,
    Outcome,
    ProfileBounds,
    ProfileTable,
    Request,
    Selection,
    profile_fits,
    select_profile,
)

if TYPE_CHECKING:
    from trt_edge_runner.bundle_format import BundleManifest

log = logging.getLogger("trt_edge_runner.policy")


def _shape(dims: Dims) -> str:
    return "[" + ", ".join(str(d) for d in dims) + "]"


def _envelope(bounds: ProfileBounds) -> str:
    """`[1, 32..2048]`: a fixed extent as one number, a range as lo..hi."""
    if len(bounds.min) != len(bounds.max):
        return f"min {_shape(bounds.min)} / max {_shape(bounds.max)} (malformed: ranks differ)"
    parts = [str(a) if a == b else f"{a}..{b}" for a, b in zip(bounds.min, bounds.max, strict=True)]
    return "[" + ", ".join(parts) + "]"


def _input_name(names: Sequence[str] | None, i: int) -> str:
    return names[i] if names is not None and i < len(names) else f"#{i}"


def _profile_label(profile: int, profile_names: Sequence[str] | None) -> str:
    if profile_names is not None and 0 <= profile < len(profile_names):
        return f"profile {profile} ({profile_names[profile]!r})"
    return f"profile {profile}"


def _table_names(
    source: ProfileTable | BundleManifest,
    names: Sequence[str] | None,
    profile_names: Sequence[str] | None,
) -> tuple[ProfileTable, Sequence[str] | None, Sequence[str] | None]:
    if isinstance(source, ProfileTable):
        return source, names, profile_names
    table = ProfileTable.from_bundle(source)
    return (
        table,
        names if names is not None else [t.name for t in source.inputs],
        profile_names if profile_names is not None else [p.name for p in source.profiles],
    )


def check_inputs(
    source: ProfileTable | BundleManifest,
    profile: int,
    dims: Sequence[Dims],
    *,
    names: Sequence[str] | None = None,
    profile_names: Sequence[str] | None = None,
) -> None:
    """Raise `ProfileMismatchError` unless `profile` accepts every input shape in `dims`.

    `source` is a table (pass `names`/`profile_names` for readable messages) or
    a bundle manifest (names taken from it). Every input is checked; the
    message names the first offending input, dim, value and allowed range.
    """
    if not isinstance(source, ProfileTable):
        source, names, profile_names = _table_names(source, names, profile_names)
    table = source
    # Fast path first (runs once per execution): messages are built only on failure.
    if profile_fits(table, profile, dims):
        return
    raise _mismatch(table, profile, dims, names, profile_names)


def _mismatch(
    table: ProfileTable,
    profile: int,
    dims: Sequence[Dims],
    names: Sequence[str] | None,
    profile_names: Sequence[str] | None,
) -> ProfileMismatchError:
    """The error for the first input of `dims` that `profile` does not accept."""
    where = _profile_label(profile, profile_names)
    if not 0 <= profile < len(table.bounds):
        return ProfileMismatchError(
            f"{where} does not exist: the engine has {len(table.bounds)} profile(s)"
        )
    row = table.bounds[profile]
    if len(row) < len(dims):
        return ProfileMismatchError(
            f"{where} describes {len(row)} input(s) but the execution passes {len(dims)}; "
            "the bundle's profile table is malformed: rebuild the bundle"
        )
    for i, (bounds, shape) in enumerate(zip(row, dims, strict=False)):
        name = _input_name(names, i)
        if len(shape) != len(bounds.min) or len(shape) != len(bounds.max):
            return ProfileMismatchError(
                f"input {name!r} has rank {len(shape)} (shape {_shape(shape)}) but {where} "
                f"expects rank {len(bounds.min)} {_envelope(bounds)}; pass a tensor of that rank"
            )
        for d, (value, lo, hi) in enumerate(zip(shape, bounds.min, bounds.max, strict=True)):
            if value < lo or value > hi:
                return ProfileMismatchError(
                    f"input {name!r} dim {d} = {value} is outside {where}'s allowed range "
                    f"[{lo}, {hi}] (shape {_shape(shape)}, profile accepts {_envelope(bounds)}); "
                    "pass a shape inside the range, or pin/select a profile that accepts it"
                )
    raise AssertionError("_mismatch called for inputs the profile accepts")


def no_match_error(
    source: ProfileTable | BundleManifest,
    dims: Sequence[Dims],
    *,
    names: Sequence[str] | None = None,
    profile_names: Sequence[str] | None = None,
) -> ProfileMismatchError:
    """The error for NO_PROFILE_MATCHES_INPUTS: the shapes, then every profile's ranges."""
    table, names, profile_names = _table_names(source, names, profile_names)
    shapes = ", ".join(f"{_input_name(names, i)}={_shape(s)}" for i, s in enumerate(dims))
    if not table.bounds:
        return ProfileMismatchError(
            f"no profile matches inputs {shapes}: the engine's profile table is empty; "
            "rebuild the bundle with at least one profile"
        )
    lines = []
    for p, row in enumerate(table.bounds):
        ranges = "; ".join(f"{_input_name(names, i)} {_envelope(b)}" for i, b in enumerate(row))
        lines.append(f"  {_profile_label(p, profile_names)}: {ranges or 'no inputs'}")
    return ProfileMismatchError(
        f"no profile matches inputs {shapes}; the profiles accept:\n"
        + "\n".join(lines)
        + "\nuse shapes inside one profile, or add a profile covering them to the manifest"
    )


class ProfileResolver:
    """One engine's profile state: table, active profile, and the pin-ignored warn-once.

    `resolve` is the whole decision of one execution: select, turn failure
    outcomes into errors, validate every input against the selected profile,
    then record it as active (so auto stays sticky). Not thread-safe by design,
    like an ExecuTorch Module: one engine executes on one thread at a time.
    """

    def __init__(
        self,
        table: ProfileTable,
        *,
        names: Sequence[str] | None = None,
        profile_names: Sequence[str] | None = None,
        engine: str = "engine",
    ) -> None:
        self.table = table
        self.names = names
        self.profile_names = profile_names
        self.engine = engine
        self.pin_ignored_warned = False

    @classmethod
    def from_bundle(cls, manifest: BundleManifest) -> ProfileResolver:
        return cls(
            ProfileTable.from_bundle(manifest),
            names=[t.name for t in manifest.inputs],
            profile_names=[p.name for p in manifest.profiles],
            engine=f"{manifest.name}-{manifest.version}",
        )

    @property
    def active(self) -> int:
        return self.table.active

    def resolve(self, request: Request, dims: Sequence[Dims]) -> Selection:
        """Select and validate for one execution; raise a RunnerError if it cannot run."""
        selection = select_profile(self.table, request, dims)
        outcome = selection.outcome
        if outcome is Outcome.NO_PROFILE_MATCHES_INPUTS:
            raise no_match_error(
                self.table, dims, names=self.names, profile_names=self.profile_names
            )
        if outcome is Outcome.REQUESTED_PROFILE_UNAVAILABLE:
            count = len(self.table.bounds)
            index = request.index
            why = (
                "profile indices are never negative"
                if index is not None and index < 0
                else f"the engine has {count} profile(s) (valid: 0..{count - 1})"
            )
            raise RequestedProfileUnavailableError(
                f"{self.engine}: the request pins profile {index}, but {why}; "
                "pin an index in range or use OptimizationProfileGuard.automatic()"
            )
        if outcome is Outcome.PIN_IGNORED_SINGLE_PROFILE and not self.pin_ignored_warned:
            self.pin_ignored_warned = True
            log.warning(
                "%s has a single optimization profile; ignoring the pin to profile %s and "
                "running profile 0 (logged once per engine)",
                self.engine,
                request.index,
            )
        profile = selection.profile
        assert profile is not None, "a continuing outcome carries a profile"
        if request.kind != "auto" and not profile_fits(self.table, profile, dims):
            # Auto only answers OK with a profile every input fits; pins and
            # Default are taken without a fit check, so they are validated here.
            raise _mismatch(self.table, profile, dims, self.names, self.profile_names)
        if profile != self.table.active:
            self.table = self.table.with_active(profile)
        return selection
