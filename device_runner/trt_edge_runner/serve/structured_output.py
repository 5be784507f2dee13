"""Structured output: a JSON Schema compiled into a grammar, and the per-token masks that hold
a generation to it.

Sampling happens in the engine and logits never cross the pipe (docs/engine-protocol.md), so
the grammar runs here and tells the engine, before each token, which ids it may pick: a
`GrammarConstraint` gives the bitset for the next token (`allowed`) and follows each token the
engine sampled (`accept`). The engine sets every other id's logit to -inf before its sampling
rules, so the text always parses as the schema says (or stops at `max_tokens`).

The grammar engine is llguidance (MIT, the Rust core of Guidance, wheels for aarch64 and
x86_64, any CPython >= 3.10 through the stable ABI): it reads the bundle's own tokenizer.json
directly, with no transformers on the device. It is the `structured` extra of the device
package; a service without it refuses `response_format` by name instead of ignoring it.

JSON is written compact (no whitespace between tokens: a small model otherwise may spend its
whole budget on spaces the grammar allows), the bundle's eos ids end it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from trt_edge_runner.errors import TrtEdgeError
from trt_edge_runner.serve.api_errors import ApiError, bad_field

# llguidance's JSON compiler options: compact output, the schema's keywords held strictly (a
# keyword it does not implement is a compile error, never silently dropped).
COMPILE_OPTIONS = {"whitespace_flexible": False, "lenient": False}


def _llguidance(field: str = "response_format") -> Any:
    """The grammar engine module; a 400 naming `field` (what asked for a grammar) when this
    service has none, saying what to install."""
    try:
        import llguidance
    except ImportError:
        raise ApiError(
            400,
            "needs the grammar engine, which this service lacks; install "
            f"trt-edge-runner[structured] (llguidance) on the device, or omit {field}",
            field=field,
        ) from None
    return llguidance


class GrammarTokenizer:
    """The bundle's tokenizer as the grammar engine sees it: built once per loaded model
    (about a second for a 150k vocabulary), shared by every request's matcher."""

    def __init__(self, tokenizer_json: str, vocab_size: int, eos_token_ids: Sequence[int]):
        self.vocab_size = vocab_size
        self.eos_token_ids = tuple(eos_token_ids)
        self._json = tokenizer_json
        self._built: Any = None

    def built(self) -> Any:
        if self._built is None:
            llg = _llguidance()
            self._built = llg.LLTokenizer(self._json, eos_token=list(self.eos_token_ids) or None)
        return self._built


@dataclass(frozen=True)
class Grammar:
    """A grammar (a JSON Schema's, or a forced tool call's) checked against one tokenizer: a
    fresh `GrammarConstraint` per generation."""

    tokenizer: GrammarTokenizer
    grammar: str

    def constraint(self) -> GrammarConstraint:
        llg = _llguidance()
        return GrammarConstraint(
            self.tokenizer, llg.LLMatcher(self.tokenizer.built(), self.grammar)
        )


def compile_json_schema(
    tokenizer: GrammarTokenizer, schema: Mapping[str, Any], field: str
) -> Grammar:
    """`schema` as a grammar; a schema the grammar engine cannot compile (a keyword it does not
    implement, a broken `$ref`, a regex it cannot read) is a 400 naming `field`."""
    llg = _llguidance(field.partition(".")[0])
    try:
        grammar = llg.LLMatcher.grammar_from_json_schema(
            json.dumps(schema), overrides=COMPILE_OPTIONS
        )
    except ValueError as exc:
        raise bad_field(field, f"not a JSON Schema the grammar engine reads: {exc}") from None
    return _checked(tokenizer, grammar, field)


def compile_lark(tokenizer: GrammarTokenizer, lark: str, field: str) -> Grammar:
    """A Lark grammar (llguidance's dialect, `%json` for an embedded schema: the forced tool
    call of serve.tool_calls); one it cannot compile is a 400 naming `field`."""
    return _checked(tokenizer, _llguidance(field).LLMatcher.grammar_from_lark(lark), field)


def _checked(tokenizer: GrammarTokenizer, grammar: str, field: str) -> Grammar:
    llg = _llguidance()
    is_error, messages = llg.LLMatcher.validate_grammar_with_warnings(grammar, tokenizer.built())
    if is_error:
        why = " ".join(" ".join(messages).split())
        raise bad_field(field, f"the grammar engine cannot compile it: {why}")
    return Grammar(tokenizer, grammar)


class ConstraintBroken(TrtEdgeError):
    """The engine sampled a token the grammar had refused (a bug on one side or the other)."""


class GrammarConstraint:
    """One generation's grammar state: the mask for the next token, and each token taken."""

    def __init__(self, tokenizer: GrammarTokenizer, matcher: Any) -> None:
        self._tokenizer = tokenizer
        self._matcher = matcher
        self._words = (tokenizer.vocab_size + 31) // 32

    def allowed(self) -> bytes:
        """The ids the next token may be: little-endian uint32 words, bit k%32 of word k//32
        for id k, exactly as many words as the model's vocabulary needs. Once the grammar is
        complete only the eos ids remain, so the engine stops there."""
        if self._matcher.is_stopped():
            return self._only(self._tokenizer.eos_token_ids)
        mask = bytes(self._matcher.compute_bitmask())
        size = self._words * 4
        return mask[:size].ljust(size, b"\0")  # the tokenizer's and the model's vocab may differ

    def _only(self, ids: Sequence[int]) -> bytes:
        words = bytearray(self._words * 4)
        for token in ids:
            if 0 <= token < self._tokenizer.vocab_size:
                words[token // 8] |= 1 << (token % 8)
        return bytes(words)

    def accept(self, token: int) -> None:
        """Follow the token the engine sampled; ConstraintBroken if the grammar refuses it."""
        if self._matcher.is_stopped():
            return  # the eos that ends it
        if not self._matcher.consume_token(token):
            raise ConstraintBroken(
                f"token {token} breaks the grammar: {self._matcher.get_error() or 'refused'}"
            )
