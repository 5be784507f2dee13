"""Typed errors of the device runner.

Every failure a caller can act on is a `RunnerError` subclass whose message says
what is wrong, where (bundle file, phase, input name, dim, value, allowed range)
and what to do, so command-line front ends print `str(error)` and exit instead of
showing a traceback. Tests and callers tell failures apart by type, not by text.

Standard library only: this module ships to devices.
"""

from __future__ import annotations


class RunnerError(Exception):
    """Base of every error the runner raises for bad bundles, requests or inputs."""


class ProfileMismatchError(RunnerError):
    """An input shape the selected profile (or, under auto, every profile) does not accept."""


class UnknownPhaseError(RunnerError):
    """A phase name the bundle's runtime policy does not define."""


class RequestedProfileUnavailableError(RunnerError):
    """A pinned profile index the bundle cannot honour (negative, or past the last profile)."""


class BundleFormatMismatchError(RunnerError):
    """`bundle.json` is missing or not a document this runner reads (wraps BundleFormatError)."""


class BundleIntegrityError(RunnerError):
    """A bundle file is missing, or its size or sha256 differs from `bundle.json`."""


class ProgramLoadError(RunnerError):
    """The ExecuTorch runtime could not load `model.pte` or its method."""


class InputSpecError(RunnerError):
    """Wrong number of inputs, or an input's dtype or rank differs from the bundle's I/O spec."""


class InputValueError(RunnerError):
    """An integer input holds a value outside the `values` range the bundle declares."""


class ExecutionError(RunnerError):
    """The ExecuTorch runtime failed while executing the method."""


class RuntimeUnavailableError(RunnerError):
    """The ExecuTorch runtime (or numpy) is not installed on this device."""


class OutputPathError(RunnerError):
    """An output path (e.g. `--save-outputs`) is a directory, or its folder is not writable."""
