"""Typed errors of the device agent, under the one root (`trt_edge_runner.errors`).

A refused or unfinished operation is exit 1 (the job ran and said no); a device
setting that cannot be used is exit 2 (bad input: fix the file or the flag).
"""

from __future__ import annotations

from trt_edge_runner.errors import EXIT_BAD_INPUT, TrtEdgeError


class AgentError(TrtEdgeError):
    """The agent refused or could not finish an operation; the message says what and why."""


class InstallRefused(AgentError):
    """The bundle is not installed: bad signature, wrong target, unsafe tar, failed smoke run."""


class NothingInstalled(AgentError):
    """`status`/`health`/`rollback` on a device with no active (or no previous) slot."""


class AgentConfigError(AgentError):
    """A device setting (facts file, device config, keys directory) is unreadable or malformed."""

    exit_code = EXIT_BAD_INPUT
