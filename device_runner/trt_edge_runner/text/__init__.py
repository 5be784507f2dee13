"""Text in and out of a causal-LM bundle on a device: tokenizer, chat template, streaming, stops.

`BundleText.from_bundle(DIR)` is the one entry point (what `trt-edge-device generate
--prompt/--chat` and the device service use): it reads the bundle's `tokenizer.json` and
its `llm` section (`chat_template`, `special_tokens`, the bos rule) and offers

- `encode(text)` — a plain prompt, as `trt-edge generate --prompt` encodes it;
- `render_chat(messages)` / `encode_chat(messages)` — the model's chat template rendered as
  transformers' `apply_chat_template` renders it (`chat_template.ChatTemplate`);
- `decode(ids)` and `stream(stop=...)` — a `TextStream` that turns generated ids into text
  deltas (`streaming.IncrementalDecoder`: never half a UTF-8 character) and stops at stop
  strings (`stop_strings.StopStrings`: the match trimmed, a possible prefix held back).

No torch, executorch or numpy. `tokenizers` and `jinja2` (the `text` extra of
`trt-edge-runner`) are imported when a bundle's text is first loaded, never at import time.
"""

from __future__ import annotations

from trt_edge_runner.text.bundle_text import BundleText, TextStream
from trt_edge_runner.text.chat_template import ChatTemplate
from trt_edge_runner.text.errors import (
    ChatTemplateError,
    NoChatTemplateError,
    NoTokenizerError,
    TextError,
    TextPackageMissingError,
)
from trt_edge_runner.text.stop_strings import StopStrings
from trt_edge_runner.text.streaming import IncrementalDecoder

__all__ = [
    "BundleText",
    "ChatTemplate",
    "ChatTemplateError",
    "IncrementalDecoder",
    "NoChatTemplateError",
    "NoTokenizerError",
    "StopStrings",
    "TextError",
    "TextPackageMissingError",
    "TextStream",
]
