"""Streaming detokenization: deltas never split a character and add up to the full decode."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest

from tests.text.conftest import ChatText

TEXTS = [
    "The cache is a buffer.",
    "unicode: naïve café – 東京 🚀🚀 done",
    "  leading and trailing  ",
    "emoji at the end 🧪",
    "numbers 1234567890\nand\ttabs",
]


def metaspace_tokenizer() -> Any:
    """A SentencePiece-style BPE (▁ for spaces, byte fallback off), trained here."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    from tests.llm.llm_folders import example_writer

    tokenizer = Tokenizer(models.BPE(unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace()
    tokenizer.decoder = decoders.Metaspace()
    trainer = trainers.BpeTrainer(
        vocab_size=400, special_tokens=["<unk>", "<eos>"], show_progress=False
    )
    lines = example_writer().corpus()[:400] + TEXTS
    tokenizer.train_from_iterator(lines, trainer=trainer)
    return tokenizer


def stream_all(decode: Callable[[Sequence[int]], str], ids: list[int]) -> tuple[list[str], str]:
    from trt_edge_runner.text import IncrementalDecoder

    decoder = IncrementalDecoder(decode)
    deltas = [decoder.push(i) for i in ids]
    return deltas, decoder.finish()


@pytest.mark.parametrize("text", TEXTS)
def test_byte_level_deltas_concatenate_to_the_decode(
    chat_text: Callable[[str | None], ChatText], text: str
) -> None:
    bundle = chat_text(None).text
    ids = bundle.encode(text)
    deltas, tail = stream_all(bundle.decode, ids)
    assert "".join(deltas) + tail == bundle.decode(ids) == text
    assert all("\ufffd" not in d for d in deltas)


def test_a_multibyte_character_split_across_tokens_waits_for_its_last_byte(
    chat_text: Callable[[str | None], ChatText],
) -> None:
    bundle = chat_text(None).text
    ids = bundle.encode("🚀")[1:]  # without bos
    assert len(ids) > 1, "the emoji must span tokens for this test to mean something"
    assert bundle.decode(ids[:1]).endswith("\ufffd")
    deltas, tail = stream_all(bundle.decode, ids)
    assert deltas[:-1] == [""] * (len(ids) - 1) and deltas[-1] == "🚀" and tail == ""


@pytest.mark.parametrize("text", TEXTS)
def test_metaspace_deltas_keep_word_spaces(text: str) -> None:
    tokenizer = metaspace_tokenizer()
    ids = tokenizer.encode(text).ids

    def decode(window: Sequence[int]) -> str:
        out: str = tokenizer.decode(list(window), skip_special_tokens=True)
        return out

    deltas, tail = stream_all(decode, ids)
    assert "".join(deltas) + tail == decode(ids)
    assert any(d.startswith(" ") for d in deltas[1:]) or " " not in text.strip()


def test_skipped_special_tokens_emit_nothing(chat_text: Callable[[str | None], ChatText]) -> None:
    bundle = chat_text(None).text
    eos = bundle.section.eos_token_ids[0]
    ids = [*bundle.encode("before")[1:], eos, *bundle.encode(" after")[1:]]
    deltas, tail = stream_all(bundle.decode, ids)
    assert "".join(deltas) + tail == "before after"
