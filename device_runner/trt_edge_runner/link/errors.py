"""Errors of the MQTT link: settings that cannot be used (exit 2) and a link that failed."""

from __future__ import annotations

from trt_edge_runner.errors import EXIT_BAD_INPUT, TrtEdgeError


class LinkError(TrtEdgeError):
    """The link could not do its job (a broker that refuses the credentials, a lost document)."""


class LinkConfigError(LinkError):
    """A flag or file the link was given cannot be used; nothing was connected."""

    exit_code = EXIT_BAD_INPUT
