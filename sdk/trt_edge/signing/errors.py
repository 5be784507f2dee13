"""Typed errors of the signing commands."""

from __future__ import annotations


class SigningError(Exception):
    """A key or bundle the user named cannot be used; the message says which and why.

    `exit_code` follows the CLI convention: 2 for bad input (missing or wrong key
    file), 1 when the operation itself was refused (bundle does not verify).
    """

    def __init__(self, message: str, exit_code: int = 2) -> None:
        super().__init__(message)
        self.exit_code = exit_code
