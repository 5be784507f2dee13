"""Stop strings for streamed text: stop at the first match, trim it, hold back a maybe-prefix.

OpenAI's `stop` (and `generate --stop`) ends generation when the text contains one of
the strings, which is not itself returned. While streaming, text that could be the start
of a stop string (`"\\n\\nUs"` for `"\\n\\nUser:"`) is held back until the next delta
says whether it is; everything before it goes out at once. Matching is on text, so a
stop string split across tokens is found.
"""

from __future__ import annotations

from collections.abc import Iterable


class StopStrings:
    """Fed text deltas (`feed`), emits what is safe to show and says when to stop."""

    def __init__(self, stops: Iterable[str] = ()) -> None:
        self.stops = tuple(s for s in stops if s)
        self._held = ""
        self.stopped = False
        self.matched: str | None = None  # the stop string that ended the text

    def feed(self, delta: str) -> str:
        """The part of `delta` (with what was held) that can be shown now; sets `stopped`."""
        if self.stopped:
            return ""
        text = self._held + delta
        first: tuple[int, str] | None = None
        for stop in self.stops:
            at = text.find(stop)
            if at >= 0 and (first is None or at < first[0]):
                first = (at, stop)
        if first is not None:
            self.stopped, self.matched, self._held = True, first[1], ""
            return text[: first[0]]
        keep = self._maybe_prefix(text)
        self._held = text[len(text) - keep :] if keep else ""
        return text[: len(text) - keep]

    def flush(self) -> str:
        """The held-back tail at the end of generation (it was not a stop string after all)."""
        held, self._held = self._held, ""
        return "" if self.stopped else held

    def _maybe_prefix(self, text: str) -> int:
        """The length of the longest end of `text` that begins some stop string."""
        longest = 0
        for stop in self.stops:
            for size in range(min(len(stop) - 1, len(text)), longest, -1):
                if text.endswith(stop[:size]):
                    longest = size
                    break
        return longest
