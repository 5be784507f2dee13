"""Emulation: the runner itself applies the profile policy to one engine's executions.

docs/design.md keeps three things apart: the pure policy (`policy.py`), the actuator
(a backend's native guard: `actuator.py`) and emulation — here. Emulation is
what makes a CPU bundle reject exactly what a device would: per execution it
selects a profile for the request in scope (`select_profile`), turns failure
outcomes into errors, validates every input against the selected profile
(`input_check`) and records it as active, so auto stays sticky. The runner
emulates on every backend — under a native guard too, where it gives the same
clear errors before the engine would fail.

Where the warn-once lives: in `ProfileResolver`, one per engine (the runner
opens one per loaded program, as a native delegate holds one per engine). A
single-profile engine under a nonzero pin would otherwise log on every call of
a decode loop; the policy itself stays pure and never logs.

Order inside an execution (docs/design.md): collect all input dims → select →
validate every input against the selected profile → switch if it changed.

Standard library only: this module ships to devices.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from trt_edge_runner.errors import RequestedProfileUnavailableError
from trt_edge_runner.input_check import mismatch_error, no_match_error
from trt_edge_runner.policy import (
    Dims,
    Outcome,
    ProfileTable,
    Request,
    Selection,
    profile_fits,
    select_profile,
)

if TYPE_CHECKING:
    from trt_edge_runner.bundle_format import BundleManifest

log = logging.getLogger("trt_edge_runner.policy")


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
            raise mismatch_error(self.table, profile, dims, self.names, self.profile_names)
        if profile != self.table.active:
            self.table = self.table.with_active(profile)
        return selection
