"""Input validation against the selected profile, worded for a user.

`select_profile` (policy.py) only decides; this module turns a misfit into what
a user sees: a `ProfileMismatchError` naming the input, the dim, the value and
the allowed range (for "no profile matches", every profile's ranges). The
runner's emulation (`emulation.ProfileResolver`) raises these.

Standard library only: this module ships to devices.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from trt_edge_runner.errors import ProfileMismatchError
from trt_edge_runner.policy import (
    Dims,
    ProfileBounds,
    ProfileTable,
    profile_fits,
)

if TYPE_CHECKING:
    from trt_edge_runner.bundle_format import BundleManifest


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
    raise mismatch_error(table, profile, dims, names, profile_names)


def mismatch_error(
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
    raise AssertionError("mismatch_error called for inputs the profile accepts")


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
