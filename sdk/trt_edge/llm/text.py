"""Text ↔ token ids from a bundle, with the `tokenizers` library alone (no transformers).

The two rules a runner applies (bundle.json `llm`): encode with special tokens on,
then put `bos_token_id` first when `prepend_bos`; decode skipping special tokens.
The C++ runner is to do the same with any HF-tokenizers implementation.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from trt_edge_runner.bundle_format import LlmSection

from trt_edge.llm.errors import NoTokenizerError


class HostTokenizer:
    """A bundle's tokenizer on this host."""

    def __init__(self, tokenizer: Any, section: LlmSection) -> None:
        self._tokenizer = tokenizer
        self._section = section

    @classmethod
    def from_bundle(cls, bundle_dir: Path, section: LlmSection) -> HostTokenizer:
        if section.tokenizer is None:
            raise NoTokenizerError(
                f"{bundle_dir}: the bundle carries no tokenizer (its model folder had none)",
                hint="pass token ids with --prompt-ids instead",
            )
        try:
            from tokenizers import Tokenizer
        except ImportError:
            raise NoTokenizerError(
                "text needs the `tokenizers` package on this host",
                hint="pip install tokenizers, or pass token ids with --prompt-ids",
            ) from None
        return cls(Tokenizer.from_file(str(bundle_dir / section.tokenizer)), section)

    def encode(self, text: str) -> list[int]:
        ids = list(self._tokenizer.encode(text).ids)
        bos = self._section.bos_token_id
        if self._section.prepend_bos and bos is not None:
            ids = [bos, *ids]
        return ids

    def decode(self, ids: list[int]) -> str:
        text: str = self._tokenizer.decode(ids, skip_special_tokens=True)
        return text
