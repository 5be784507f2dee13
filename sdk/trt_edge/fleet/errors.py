"""Typed errors of the rollout command."""

from __future__ import annotations


class RolloutError(Exception):
    """A plan, inventory or bundle that cannot be rolled out; the message says where and why.

    `exit_code` 2: bad input (the rollout did not start); 1: the rollout ran and failed.
    """

    def __init__(self, message: str, exit_code: int = 2) -> None:
        super().__init__(message)
        self.exit_code = exit_code
