"""`BundleText`: a causal-LM bundle's text side — encode, chat, decode, stream with stops.

The rules are the bundle's (`bundle.json` `llm`, see `bundle_format.LlmSection`):
a prompt is `tokenizer.encode(text)` with special tokens, then `[bos_token_id] + ids`
when `prepend_bos`; a chat is the chat template rendered (`ChatTemplate`) and encoded
*without* special tokens (the template writes its own bos, as transformers tokenizes
`apply_chat_template`'s text); output is decoded skipping special tokens.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from trt_edge_runner.bundle_format import BUNDLE_JSON, LlmSection
from trt_edge_runner.bundle_integrity import read_manifest
from trt_edge_runner.text.chat_template import ChatTemplate, Message
from trt_edge_runner.text.errors import (
    NoChatTemplateError,
    NoTokenizerError,
    TextError,
    TextPackageMissingError,
)
from trt_edge_runner.text.stop_strings import StopStrings
from trt_edge_runner.text.streaming import IncrementalDecoder


def _load_tokenizer(path: Path) -> Any:
    try:
        from tokenizers import Tokenizer
    except ImportError:
        raise TextPackageMissingError(
            "text needs the `tokenizers` package on this machine",
            hint="pip install 'trt-edge-runner[text]', or pass token ids with --prompt-ids",
        ) from None
    try:
        return Tokenizer.from_file(str(path))
    except Exception as exc:  # the Rust library raises a bare Exception for a bad file
        raise TextError(
            f"{path}: not a tokenizer the `tokenizers` library reads ({exc})",
            hint="rebuild the bundle, or reinstall it if the file was damaged",
        ) from None


class BundleText:
    """The tokenizer and chat template of one bundle (see the module docstring)."""

    def __init__(self, tokenizer: Any, section: LlmSection, source: str) -> None:
        self._tokenizer = tokenizer
        self.section = section
        self.source = source  # the bundle directory, for messages
        self._template: ChatTemplate | None = None

    @classmethod
    def from_bundle(cls, bundle_dir: Path, section: LlmSection | None = None) -> BundleText:
        """The text side of `bundle_dir`; `section` when the caller has read bundle.json."""
        bundle_dir = Path(bundle_dir)
        if section is None:
            _, manifest = read_manifest(bundle_dir)
            if manifest.llm is None:
                raise NoTokenizerError(
                    f"{bundle_dir / BUNDLE_JSON}: not a causal-LM bundle (no `llm` section), so it "
                    "has no text side",
                    hint="pass input tensors instead (trt-edge-device run)",
                )
            section = manifest.llm
        if section.tokenizer is None:
            raise NoTokenizerError(
                f"{bundle_dir / BUNDLE_JSON}: llm.tokenizer is null: the bundle carries no "
                "tokenizer (its model folder had no tokenizer files)",
                hint="pass token ids with --prompt-ids, or rebuild from a folder with a "
                "tokenizer (tokenizer.json + tokenizer_config.json)",
            )
        path = bundle_dir / section.tokenizer
        if not path.is_file():
            raise NoTokenizerError(
                f"{path}: missing (bundle.json names it as the tokenizer)",
                hint="reinstall the bundle: its files are incomplete",
            )
        return cls(_load_tokenizer(path), section, str(bundle_dir))

    # ---- in ---------------------------------------------------------------------------
    def encode(self, text: str) -> list[int]:
        """A plain prompt's ids: special tokens on, then bos first when the bundle says so."""
        ids = list(self._tokenizer.encode(text).ids)
        bos = self.section.bos_token_id
        if self.section.prepend_bos and bos is not None:
            ids = [bos, *ids]
        return ids

    @property
    def has_chat_template(self) -> bool:
        return self.section.chat_template is not None

    @property
    def chat_template(self) -> ChatTemplate:
        """The compiled template; NoChatTemplateError when the model has none."""
        if self.section.chat_template is None:
            raise NoChatTemplateError(
                f"{Path(self.source) / BUNDLE_JSON}: llm.chat_template is "
                + ("absent" if self.section.special_tokens is None else "null")
                + ": the model has no chat template, so a chat cannot be turned into a prompt",
                hint="send a plain prompt (--prompt TEXT) instead"
                + (
                    ", or rebuild the bundle with this trt-edge to record the folder's template"
                    if self.section.special_tokens is None
                    else ""
                ),
            )
        if self._template is None:
            self._template = ChatTemplate(
                self.section.chat_template, self.section.special_tokens or {}
            )
        return self._template

    def render_chat(
        self, messages: Sequence[Message], *, add_generation_prompt: bool = True, **kwargs: Any
    ) -> str:
        """The chat's prompt text, as transformers' `apply_chat_template(tokenize=False)`."""
        return self.chat_template.render(
            messages, add_generation_prompt=add_generation_prompt, **kwargs
        )

    def encode_chat(
        self, messages: Sequence[Message], *, add_generation_prompt: bool = True, **kwargs: Any
    ) -> list[int]:
        """The chat's prompt ids, as transformers' `apply_chat_template(tokenize=True)`."""
        text = self.render_chat(messages, add_generation_prompt=add_generation_prompt, **kwargs)
        return list(self._tokenizer.encode(text, add_special_tokens=False).ids)

    def tokenizer_json(self) -> str:
        """The tokenizer as tokenizer.json text (what the grammar engine reads)."""
        text: str = self._tokenizer.to_str()
        return text

    # ---- out --------------------------------------------------------------------------
    def decode(self, ids: Sequence[int]) -> str:
        """Generated ids as text, special tokens skipped."""
        text: str = self._tokenizer.decode(list(ids), skip_special_tokens=True)
        return text

    def stream(self, stop: Iterable[str] = ()) -> TextStream:
        """A fresh stream for one generation (see `TextStream`)."""
        return TextStream(IncrementalDecoder(self.decode), StopStrings(stop))

    def token_text(self, token_id: int) -> str | None:
        """The vocabulary string of one id (None when out of range), for reports."""
        text: str | None = self._tokenizer.id_to_token(token_id)
        return text


class TextStream:
    """One generation's text: `push(id)` → the delta to show; `stopped` once a stop string
    matched (the caller stops generating); `finish()` → the held-back rest; `text` so far."""

    def __init__(self, decoder: IncrementalDecoder, stops: StopStrings) -> None:
        self._decoder = decoder
        self._stops = stops
        self._shown: list[str] = []

    @property
    def stopped(self) -> bool:
        return self._stops.stopped

    @property
    def matched(self) -> str | None:
        """The stop string that ended the text, if one did."""
        return self._stops.matched

    @property
    def text(self) -> str:
        return "".join(self._shown)

    def push(self, token_id: int) -> str:
        if self.stopped:
            return ""
        return self._show(self._stops.feed(self._decoder.push(token_id)))

    def finish(self) -> str:
        if self.stopped:
            return ""
        tail = self._stops.feed(self._decoder.finish())
        return self._show(tail + ("" if self.stopped else self._stops.flush()))

    def _show(self, delta: str) -> str:
        if delta:
            self._shown.append(delta)
        return delta


def messages_from_json(doc: Any, source: str) -> list[Mapping[str, Any]]:
    """A chat document (`[{"role": …, "content": …}, …]` or `{"messages": [...]}`) checked
    enough to name what is wrong; `source` names where it came from."""
    messages = doc.get("messages") if isinstance(doc, dict) else doc
    if not isinstance(messages, list) or not messages:
        raise TextError(
            f"{source}: expected a non-empty list of messages "
            '([{"role": "user", "content": "…"}] or {"messages": [...]})'
        )
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise TextError(f"{source}: messages[{index}]: expected an object with a 'role' string")
        if "content" not in message:
            raise TextError(f"{source}: messages[{index}]: missing 'content'")
    return messages
