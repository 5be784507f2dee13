"""The model's chat template and special-token strings, taken into the bundle at build time.

Where transformers 5 finds a folder's template (and so where we look, in its order):
`chat_template.jinja` (what `save_pretrained` writes now) wins over `chat_template` in
`tokenizer_config.json` (older folders: a string, or a list of `{name, template}` of which
`default` is the one `apply_chat_template` uses without arguments). Named extra templates
(`additional_chat_templates/`) are not carried: the bundle renders the default one.

The special tokens are the strings transformers passes to every template
(`bos_token`, `eos_token`, `unk_token`, `pad_token`, … as its tokenizer resolved them).

`SAMPLE_CONVERSATIONS` are what the validate stage renders both ways (ours, on the staged
bundle, vs `apply_chat_template`): system/user/assistant, multi-turn, text parts.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from trt_edge.llm.errors import ChatTemplateSourceError

TEMPLATE_FILE = "chat_template.jinja"
TOKENIZER_CONFIG = "tokenizer_config.json"
# The named special tokens transformers hands a chat template (its SPECIAL_TOKENS_ATTRIBUTES).
SPECIAL_TOKEN_NAMES = (
    "bos_token",
    "eos_token",
    "unk_token",
    "sep_token",
    "pad_token",
    "cls_token",
    "mask_token",
)

SAMPLE_CONVERSATIONS: tuple[tuple[dict[str, Any], ...], ...] = (
    ({"role": "user", "content": "Hello!"},),
    (
        {"role": "system", "content": "You answer in one short sentence."},
        {"role": "user", "content": "What is a KV cache?"},
    ),
    (
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Name a prime."},
        {"role": "assistant", "content": "Seven."},
        {"role": "user", "content": "  And another, with  spaces and ünïcode 🚀?  "},
    ),
    (
        {"role": "user", "content": [{"type": "text", "text": "Parts as a list."}]},
        {"role": "assistant", "content": "Understood."},
        {"role": "user", "content": "Line one\nline two\ttabbed"},
    ),
)


def folder_chat_template(folder: Path) -> str | None:
    """The folder's default chat template text, or None when it has none."""
    jinja = folder / TEMPLATE_FILE
    if jinja.is_file():
        return jinja.read_text(encoding="utf-8")
    config_path = folder / TOKENIZER_CONFIG
    if not config_path.is_file():
        return None
    try:
        config = json.loads(config_path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ChatTemplateSourceError(
            f"{config_path}: not valid JSON ({exc.msg} at line {exc.lineno})",
            hint="fix or re-save the tokenizer (tokenizer.save_pretrained)",
        ) from None
    template = config.get("chat_template") if isinstance(config, dict) else None
    if template is None or isinstance(template, str):
        return template
    if isinstance(template, list):
        named = {t.get("name"): t.get("template") for t in template if isinstance(t, dict)}
        default = named.get("default")
        if isinstance(default, str):
            return default
        raise ChatTemplateSourceError(
            f"{config_path}: chat_template lists named templates {sorted(map(str, named))} "
            "but none named 'default', the one a chat is rendered with",
            hint="name the conversation template 'default' (or save it as chat_template.jinja)",
        )
    raise ChatTemplateSourceError(
        f"{config_path}: chat_template must be a string or a list of {{name, template}}, "
        f"got {type(template).__name__}"
    )


def special_token_strings(reference: Any) -> dict[str, str]:
    """The named special tokens of transformers' tokenizer `reference`, as template inputs."""
    tokens = reference.special_tokens_map
    return {name: str(tokens[name]) for name in SPECIAL_TOKEN_NAMES if tokens.get(name) is not None}
