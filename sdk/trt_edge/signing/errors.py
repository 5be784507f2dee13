"""Typed errors of the signing commands, under the one root (`trt_edge_runner.errors`)."""

from __future__ import annotations

from trt_edge_runner.errors import EXIT_BAD_INPUT, TrtEdgeError


class SigningError(TrtEdgeError):
    """A key or bundle path the user named cannot be used (exit 2); the message says why.

    A bundle that does not verify is the device side's `SignatureError` (exit 1):
    the same refusal a device makes.
    """

    exit_code = EXIT_BAD_INPUT
