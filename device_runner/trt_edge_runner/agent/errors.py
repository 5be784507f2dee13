"""Typed errors of the device agent; `exit_code` follows the CLI convention (1 refused, 2 usage)."""

from __future__ import annotations


class AgentError(Exception):
    """The agent refused or could not finish an operation; the message says what and why."""

    exit_code = 1


class InstallRefused(AgentError):
    """The bundle is not installed: bad signature, wrong target, unsafe tar, failed smoke run."""


class NothingInstalled(AgentError):
    """`status`/`health`/`rollback` on a device with no active (or no previous) slot."""


class AgentConfigError(AgentError):
    """A device setting (facts file, device config, keys directory) is unreadable or malformed."""

    exit_code = 2
