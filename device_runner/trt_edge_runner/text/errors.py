"""Typed errors of the text layer: each says which bundle file or field, and what to do.

Exit 2 (bad input): the request or the bundle cannot be used for text as it stands.
"""

from __future__ import annotations

from trt_edge_runner.errors import EXIT_BAD_INPUT, TrtEdgeError


class TextError(TrtEdgeError):
    """Base of the text layer's errors (exit 2)."""

    exit_code = EXIT_BAD_INPUT


class NoTokenizerError(TextError):
    """The bundle carries no tokenizer file (its model folder had none)."""


class NoChatTemplateError(TextError):
    """A chat was asked of a bundle whose model has no chat template."""


class ChatTemplateError(TextError):
    """The chat template failed to compile or render (a `raise_exception` in it, a bad
    message shape, a sandbox violation)."""


class TextPackageMissingError(TextError):
    """`tokenizers` or `jinja2` is not installed on this machine."""
