"""A generate command's text options: what the prompt is, and what the tokens read as.

`trt-edge-device generate` takes a prompt as token ids (`--prompt-ids`), plain text
(`--prompt`), a user turn through the model's chat template (`--prompt TEXT --chat`, with
`--system`), or a whole conversation (`--messages FILE`, JSON, `-` for stdin); `--stop`
strings end the text (OpenAI's `stop`: the match is not returned). The options are declared
in `commands/generate.py` (which imports this only when it runs); this module turns them
into prompt ids (`prompt_request`) and the generated ids into text (`generated_text`), so
the command keeps to running the generation.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trt_edge_runner.text.bundle_text import BundleText, messages_from_json
from trt_edge_runner.text.errors import TextError


@dataclass(frozen=True)
class PromptRequest:
    """The prompt ids to generate from, and the text they came from (None for ids)."""

    ids: list[int]
    text: str | None  # the prompt text the model sees (the rendered chat for a chat)
    chat: bool


@dataclass(frozen=True)
class TextResult:
    """The generated ids as text, cut at the first stop string."""

    text: str
    stop_string: str | None  # the stop string that ended it, if any
    tokens_used: int  # how many generated ids the text covers (up to the stop)


def wants_text(args: argparse.Namespace) -> bool:
    return args.prompt is not None or args.messages is not None


def _read_messages(source: str) -> list[Any]:
    where = "--messages -" if source == "-" else f"--messages {source}"
    try:
        raw = sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")
    except OSError as exc:
        raise TextError(f"{where}: cannot be read ({exc.strerror or exc})") from None
    try:
        doc = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise TextError(f"{where}: not JSON ({exc.msg} at line {exc.lineno})") from None
    return [dict(m) for m in messages_from_json(doc, where)]


def prompt_request(args: argparse.Namespace, text: BundleText) -> PromptRequest:
    """The prompt `args` ask for, as ids (TextError naming the option when it cannot be)."""
    if args.messages is not None:
        messages = _read_messages(args.messages)
    elif args.chat:
        messages = [{"role": "user", "content": args.prompt}]
        if args.system is not None:
            messages.insert(0, {"role": "system", "content": args.system})
    else:
        if args.system is not None:
            raise TextError("--system needs --chat (or --messages): a plain prompt has no turns")
        return PromptRequest(text.encode(args.prompt), args.prompt, chat=False)
    rendered = text.render_chat(messages)
    return PromptRequest(text.encode_chat(messages), rendered, chat=True)


def check_text_options(args: argparse.Namespace) -> None:
    """Option combinations that need text refused up front (before any bundle is read)."""
    if not wants_text(args):
        for option, value in (("--chat", args.chat), ("--system", args.system)):
            if value:
                raise TextError(f"{option} needs --prompt TEXT (token ids have no chat turns)")
    if args.messages is not None and (args.chat or args.system is not None):
        raise TextError("--messages is a whole conversation: drop --chat/--system")


def generated_text(text: BundleText, tokens: Sequence[int], stops: Sequence[str]) -> TextResult:
    """The text of `tokens`, streamed through the stop strings exactly as a service would."""
    stream = text.stream(stop=stops)
    used = 0
    for token in tokens:
        stream.push(token)
        used += 1
        if stream.stopped:
            break
    stream.finish()
    return TextResult(stream.text, stream.matched, used)
