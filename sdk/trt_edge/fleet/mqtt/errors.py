"""Typed errors of the operator's MQTT commands, under the one root."""

from __future__ import annotations

from trt_edge_runner.errors import EXIT_BAD_INPUT, TrtEdgeError


class FleetLinkError(TrtEdgeError):
    """The broker could not be reached, or a device did not answer in time (exit 1)."""


class BrokerConfigError(FleetLinkError):
    """A broker set-up that cannot be written: a bad name, an unusable folder (exit 2)."""

    exit_code = EXIT_BAD_INPUT
