"""Token ids → text deltas while generating, never half a character.

A byte-level tokenizer splits a multi-byte UTF-8 character (an emoji, CJK) across
tokens, and a SentencePiece-style decoder changes how a token reads by what precedes
it (the leading space of a word). Decoding each new token alone gets both wrong.
`IncrementalDecoder` decodes a short window of recent ids twice — without and with
the new ones — and emits the difference, holding everything back while the text ends
in U+FFFD (an incomplete byte sequence) until a later token completes it. The deltas
plus `finish()` concatenate to `decode(all ids)`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

REPLACEMENT = "\ufffd"  # what a decoder makes of bytes that are not (yet) a character

Decode = Callable[[Sequence[int]], str]


class IncrementalDecoder:
    """Feeds generated ids one at a time (`push`) and returns the text each one completes."""

    def __init__(self, decode: Decode) -> None:
        self._decode = decode
        self._ids: list[int] = []
        self._prefix = 0  # window start: ids before it are settled text
        self._read = 0  # ids before this have been emitted

    @property
    def ids(self) -> list[int]:
        return list(self._ids)

    def push(self, token_id: int) -> str:
        """The new text `token_id` completes ("" while a character is still incomplete)."""
        self._ids.append(token_id)
        return self._advance(final=False)

    def finish(self) -> str:
        """What is still held back (an incomplete character, as the full decode renders it)."""
        return self._advance(final=True)

    def _advance(self, *, final: bool) -> str:
        if self._read == len(self._ids):
            return ""
        before = self._decode(self._ids[self._prefix : self._read])
        after = self._decode(self._ids[self._prefix :])
        if not final and after.endswith(REPLACEMENT):
            return ""
        if len(after) <= len(before) or not after.startswith(before):
            # Nothing visible yet (a skipped special token) or the decoder rewrote the
            # window's start: keep the window growing, emit nothing until it settles.
            if final:
                self._read = len(self._ids)
            return ""
        self._prefix, self._read = self._read, len(self._ids)
        return after[len(before) :]
