"""Stop strings: stop at the first match, trim it, hold back what may begin one."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.text.conftest import ChatText


def feed_all(stops: list[str], deltas: list[str]) -> tuple[list[str], bool, str | None]:
    from trt_edge_runner.text import StopStrings

    matcher = StopStrings(stops)
    shown = [matcher.feed(d) for d in deltas]
    if not matcher.stopped:
        shown.append(matcher.flush())
    return shown, matcher.stopped, matcher.matched


def test_a_stop_string_split_across_deltas_is_found_and_trimmed() -> None:
    shown, stopped, matched = feed_all(["\n\nUser:"], ["Answer.", "\n", "\nUs", "er: more"])
    assert "".join(shown) == "Answer." and stopped and matched == "\n\nUser:"
    assert shown[1] == "" and shown[2] == ""  # held back while it could be the stop string


def test_held_back_text_is_released_when_it_turns_out_not_to_match() -> None:
    shown, stopped, _ = feed_all(["STOP"], ["abc ST", "ART here"])
    assert shown == ["abc ", "START here", ""] and not stopped


def test_the_earliest_of_several_stop_strings_wins() -> None:
    shown, stopped, matched = feed_all(["world", "lo w"], ["hello world"])
    assert "".join(shown) == "hel" and matched == "lo w" and stopped


def test_tail_that_never_completes_is_flushed_at_the_end() -> None:
    shown, stopped, _ = feed_all(["###"], ["done ##"])
    assert "".join(shown) == "done ##" and not stopped


@pytest.mark.parametrize("stop", ["café", "東京", " 🚀"])
def test_text_stream_stops_on_generated_ids(
    chat_text: Callable[[str | None], ChatText], stop: str
) -> None:
    bundle = chat_text(None).text
    full = "unicode: naïve café – 東京 🚀 and the rest"
    ids = bundle.encode(full)
    stream = bundle.stream(stop=[stop])
    consumed = 0
    for token in ids:
        stream.push(token)
        consumed += 1
        if stream.stopped:
            break
    stream.finish()
    assert stream.stopped and stream.matched == stop
    assert stream.text == full[: full.index(stop)]
    assert consumed < len(ids)  # generation stopped at the token that completed the match


def test_text_stream_without_stop_gives_the_whole_decode(
    chat_text: Callable[[str | None], ChatText],
) -> None:
    bundle = chat_text(None).text
    ids = bundle.encode("plain text, no stop ✓")
    stream = bundle.stream(stop=["never appears"])
    pieces = [stream.push(t) for t in ids] + [stream.finish()]
    assert "".join(pieces) == stream.text == bundle.decode(ids) and not stream.stopped
