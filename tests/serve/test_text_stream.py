"""Text deltas of a streamed generation: a real `tokenizers` tokenizer, stop strings cut the
text before them (never sent, even split across tokens), an incomplete character waits."""

from __future__ import annotations

import pytest
from trt_edge_runner.bundle_format import LlmSection
from trt_edge_runner.serve.text import BundleTextCodec, TextStream

WORDS = ["<unk>", "<eos>", "the", "cache", "is", "a", "buffer", "END", "E", "ND", "é"]


@pytest.fixture(scope="module")
def codec() -> BundleTextCodec:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    tokenizer = Tokenizer(models.WordLevel({w: i for i, w in enumerate(WORDS)}, unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.decoder = decoders.WordPiece(prefix="##")
    tokenizer.add_special_tokens(["<eos>"])
    section = LlmSection(
        version=1, method="forward", max_cache_len=48, vocab_size=len(WORDS),
        tokens_input="input_ids", positions_input="cache_position", logits_output="logits",
        eos_token_ids=(1,), bos_token_id=None, pad_token_id=None, tokenizer="tokenizer.json",
        adds_bos=False, prepend_bos=False, requires_zeroed_planned_memory=True,
        cache_buffers=(), architecture="test",
    )  # fmt: skip
    return BundleTextCodec(tokenizer, section, None)


def ids(*words: str) -> list[int]:
    return [WORDS.index(w) for w in words]


def test_deltas_join_to_the_decoded_text(codec: BundleTextCodec) -> None:
    stream = TextStream(codec)
    tokens = ids("the", "cache", "is", "a", "buffer")
    deltas = [stream.push(t) for t in tokens] + [stream.finish()]
    assert "".join(deltas) == codec.decode(tokens) == "the cache is a buffer"
    assert not stream.stopped


def test_a_stop_string_ends_the_text_before_it(codec: BundleTextCodec) -> None:
    stream = TextStream(codec, ("END",))
    out = [stream.push(t) for t in ids("the", "cache", "END", "is")[:3]]
    assert stream.stopped
    assert "".join(out) + stream.finish() == "the cache "  # everything before it


def test_a_stop_string_split_across_tokens_is_never_sent(codec: BundleTextCodec) -> None:
    stream = TextStream(codec, ("cache END",))
    sent = stream.push(ids("the")[0]) + stream.push(ids("cache")[0])
    assert "cache" not in sent  # could still become the stop string: held back
    sent += stream.push(ids("END")[0])
    assert stream.stopped
    assert sent + stream.finish() == "the "
    held = TextStream(codec, ("cache END",))
    text = "".join(held.push(t) for t in ids("the", "cache", "is")) + held.finish()
    assert text == "the cache is" and not held.stopped


def test_special_tokens_are_not_text(codec: BundleTextCodec) -> None:
    assert codec.decode(ids("the", "<eos>")) == "the"
