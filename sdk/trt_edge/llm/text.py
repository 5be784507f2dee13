"""Text ↔ token ids from a bundle on the host, with `tokenizers` alone (no transformers).

The rules are the device's (`trt_edge_runner.text.BundleText`, which this wraps so host and
device encode alike): encode with special tokens on, then put `bos_token_id` first when
`prepend_bos`; decode skipping special tokens. This keeps the host's own messages (the
`tokenizers` package missing *on this host*, `--prompt-ids` as the way out).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from trt_edge_runner.bundle_format import LlmSection
from trt_edge_runner.text import BundleText

from trt_edge.llm.errors import NoTokenizerError


class HostTokenizer:
    """A bundle's tokenizer on this host."""

    def __init__(self, tokenizer: Any, section: LlmSection, bundle_dir: Path) -> None:
        self.text = BundleText(tokenizer, section, str(bundle_dir))

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
        tokenizer = Tokenizer.from_file(str(bundle_dir / section.tokenizer))
        return cls(tokenizer, section, bundle_dir)

    def encode(self, text: str) -> list[int]:
        return self.text.encode(text)

    def decode(self, ids: list[int]) -> str:
        return self.text.decode(ids)
