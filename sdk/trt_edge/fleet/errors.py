"""Typed errors of the rollout command, under the one root (`trt_edge_runner.errors`)."""

from __future__ import annotations

from trt_edge_runner.errors import EXIT_BAD_INPUT, TrtEdgeError


class RolloutError(TrtEdgeError):
    """A plan, inventory or bundle that cannot be rolled out; the message says where and why.

    Exit 2 (bad input: the rollout did not start); a rollout that ran and failed
    is exit 1.
    """

    exit_code = EXIT_BAD_INPUT
