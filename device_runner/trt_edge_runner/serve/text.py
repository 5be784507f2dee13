"""Text in and out of a causal-LM bundle for the OpenAI routes: encode, decode, stream, stop.

The bundle's rules (bundle.json `llm`): encode with special tokens, `[bos] + ids` when
`prepend_bos`; decode skipping special tokens. `TextStream` turns a growing list of token
ids into text deltas: it decodes the whole completion each time (a token may end in the
middle of a UTF-8 character or merge with the next), withholds an incomplete character and
any tail that could still become a stop string, and reports the first stop string found
(the text before it is the answer; the stop string is not part of it, as OpenAI does).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trt_edge_runner.bundle_format import LlmSection


class BundleTextCodec:
    """A bundle's tokenizer (`tokenizers` library) and its chat template, if it carries one."""

    def __init__(self, tokenizer: Any, section: LlmSection, chat_template: Any | None) -> None:
        self._tokenizer = tokenizer
        self._section = section
        self._chat_template = chat_template

    @classmethod
    def open(cls, bundle_dir: Path, section: LlmSection) -> BundleTextCodec | None:
        """The bundle's text codec, or None when it ships no tokenizer (token ids only)."""
        if section.tokenizer is None:
            return None
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(bundle_dir / section.tokenizer))
        return cls(tokenizer, section, None)

    @property
    def has_chat_template(self) -> bool:
        return self._chat_template is not None

    def encode(self, text: str) -> list[int]:
        ids: list[int] = self._tokenizer.encode(text, add_special_tokens=True).ids
        bos = self._section.bos_token_id
        if self._section.prepend_bos and bos is not None:
            ids = [bos, *ids]
        return ids

    def decode(self, ids: Sequence[int]) -> str:
        text: str = self._tokenizer.decode(list(ids), skip_special_tokens=True)
        return text

    def render_chat(self, messages: list[dict[str, str]]) -> list[int]:
        """The prompt ids of a conversation (the model's chat template, generation prompt on)."""
        raise NotImplementedError("chat templates arrive with the bundle text support")


@dataclass
class TextStream:
    """Text deltas of a generation as its tokens arrive, cut at the first stop string."""

    codec: BundleTextCodec
    stops: tuple[str, ...] = ()
    tokens: list[int] | None = None
    sent: int = 0  # characters of the text already handed out
    stopped: bool = False
    text: str = ""

    def push(self, token: int) -> str:
        """Add one token; the text that is now safe to hand out (may be empty)."""
        if self.tokens is None:
            self.tokens = []
        self.tokens.append(token)
        full = self.codec.decode(self.tokens)
        cut = _first_stop(full, self.stops)
        if cut is not None:
            self.stopped = True
            self.text = full[:cut]
            return self._emit(len(self.text))
        self.text = full
        safe = len(full)
        if full.endswith("\ufffd"):  # a character cut in half: wait for its other bytes
            safe = len(full.rstrip("\ufffd"))
        safe -= _stop_prefix_len(full[:safe], self.stops)
        return self._emit(safe)

    def finish(self) -> str:
        """The rest of the text once generation ended (nothing is withheld any more)."""
        return self._emit(len(self.text))

    def _emit(self, upto: int) -> str:
        if upto <= self.sent:
            return ""
        delta = self.text[self.sent : upto]
        self.sent = upto
        return delta


def _first_stop(text: str, stops: tuple[str, ...]) -> int | None:
    found = [i for i in (text.find(s) for s in stops if s) if i >= 0]
    return min(found) if found else None


def _stop_prefix_len(text: str, stops: tuple[str, ...]) -> int:
    """How many trailing characters of `text` could be the start of a stop string."""
    longest = 0
    for stop in stops:
        for n in range(min(len(stop) - 1, len(text)), 0, -1):
            if text.endswith(stop[:n]):
                longest = max(longest, n)
                break
    return longest
