"""Typed errors of the device agent, under the one root (`trt_edge_runner.errors`).

A refused or unfinished operation is exit 1 (the job ran and said no); a device
setting that cannot be used is exit 2 (bad input: fix the file or the flag).
"""

from __future__ import annotations

from typing import Any

from trt_edge_runner.errors import EXIT_BAD_INPUT, TrtEdgeError
from trt_edge_runner.runner_interface import CALLER_KINDS


class AgentError(TrtEdgeError):
    """The agent refused or could not finish an operation; the message says what and why."""


class InstallRefused(AgentError):
    """The bundle is not installed: bad signature, wrong target, unsafe tar, failed smoke run."""


class NothingInstalled(AgentError):
    """`status`/`health`/`rollback` on a device with no active (or no previous) slot."""


class AgentConfigError(AgentError):
    """A device setting (facts file, device config, keys directory) is unreadable or malformed."""

    exit_code = EXIT_BAD_INPUT


# ---- the C++ runner as a child process (agent/runner_process.py) --------------------
class RunnerNotFound(AgentConfigError):
    """No usable `trt-edge-run` where the agent looks (`--runner`, `$TRT_EDGE_RUNNER`,
    device.json `runner`, PATH); the message names every place it looked (exit 2)."""


class RunnerBroken(AgentConfigError):
    """A `trt-edge-run` was found but cannot serve: not executable, built for another
    architecture, or it does not speak this agent's interface (exit 2: fix the device)."""


class RunnerDocumentInvalid(RunnerBroken):
    """A `trt-edge-run` document that does not match its schema (`trt_edge_runner/schemas`):
    `field` is the JSON path at fault, `schema` the schema's name."""

    def __init__(self, message: str, *, field: str, schema: str, hint: str | None = None):
        super().__init__(message, hint=hint)
        self.field = field
        self.schema = schema


class RunnerCrashed(AgentError):
    """`trt-edge-run` died of a signal or ran past its timeout: contained in the child, named
    with the stage it was in ("died of SIGSEGV while running phase decode")."""

    def __init__(self, message: str, *, signal: str | None, stage: str) -> None:
        super().__init__(message)
        self.signal = signal  # "SIGSEGV", or None for a timeout
        self.stage = stage


class RunnerRefused(AgentError):
    """`trt-edge-run` refused with one of its typed failures; `kind` and `document` are its
    JSON error. Exit 2 for the caller's kinds (usage, a request the bundle cannot serve),
    else 1, like the same failures of the Python runner."""

    def __init__(self, message: str, *, kind: str, runner_exit_code: int, error: dict[str, Any]):
        super().__init__(message, exit_code=EXIT_BAD_INPUT if kind in CALLER_KINDS else None)
        self.kind = kind
        self.runner_exit_code = runner_exit_code
        self.error = error

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "runner_error": self.error}
