"""Errors `trt-edge generate` raises for a causal-LM bundle (exit 2: the request or bundle).

Apart from `generation` and `text` so the CLI module can name them without importing
anything else at start-up (`trt-edge --help` imports every command module).
"""

from __future__ import annotations

from trt_edge_runner.errors import EXIT_BAD_INPUT, TrtEdgeError


class LlmError(TrtEdgeError):
    """Base of the causal-LM errors: the request or the bundle cannot be used as it stands
    (exit 2)."""

    exit_code = EXIT_BAD_INPUT


class GenerateContractError(LlmError):
    """The bundle or the prompt does not fit the I/O contract generate needs (exit 2)."""


class NoTokenizerError(LlmError):
    """The bundle carries no tokenizer, or `tokenizers` is not installed here (exit 2)."""


class ChatTemplateSourceError(LlmError):
    """The model folder's chat template cannot be read (exit 2: fix the folder)."""
