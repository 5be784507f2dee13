"""Typed errors of `trt-edge flash`."""

from __future__ import annotations


class FlashError(Exception):
    """The BSP, board or bundle cannot be used; the message says which and what to do."""

    def __init__(self, message: str, exit_code: int = 2) -> None:
        super().__init__(message)
        self.exit_code = exit_code
