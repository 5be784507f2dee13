"""Typed errors of `trt-edge flash`, under the one root (`trt_edge_runner.errors`)."""

from __future__ import annotations

from trt_edge_runner.errors import EXIT_BAD_INPUT, EXIT_FAILED, TrtEdgeError


class FlashError(TrtEdgeError):
    """The BSP, board or bundle cannot be used (exit 2); the message says which and what to do."""

    exit_code = EXIT_BAD_INPUT


class FlashRefusedError(FlashError):
    """Staging ran and said no: the bundle does not verify or fit, or the rootfs write failed."""

    exit_code = EXIT_FAILED
