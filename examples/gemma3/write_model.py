"""Write the mini Gemma-3 this example builds: a real save_pretrained folder, no download.

    python write_model.py [FOLDER]          # default: mini-gemma3/ next to this file
    python write_model.py --demo FOLDER     # the smaller one `make demo` builds (demo.yaml)

The folder is what `save_pretrained` writes for a real checkpoint — config.json,
generation_config.json, model.safetensors — plus a tokenizer (tokenizer.json and
tokenizer_config.json with bos/eos/pad/unk) and a Gemma-3-style chat template
(chat_template.jinja, as transformers 5 saves it). The weights are random (fixed seed) and
the tokenizer is a byte-level BPE trained here on the standard library's docstrings,
so every run in the same environment writes the same bytes and nothing is fetched
from the Hugging Face hub. The model is the upstream seed's: `Gemma3ForCausalLM`,
hidden 320, 3 layers (sliding, sliding, full attention; window 32), 4 query heads
sharing 1 KV head of dim 80, vocabulary 2048, tied embeddings.

`write_folder(folder, config, chat_template)` and `train_tokenizer(vocab)` are reused by
the tests to write Llama/Qwen minis the same way (Qwen with a ChatML template, Llama with
none). The templates are ours, written to the conversation formats those families use.
"""

from __future__ import annotations

import inspect
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DEFAULT_FOLDER = HERE / "mini-gemma3"
SEED = 0

# Special tokens take the first ids, in this order, in every mini folder: the four named
# ones, then the turn markers of the two chat formats below.
SPECIALS = (
    "<pad>",
    "<eos>",
    "<bos>",
    "<unk>",
    "<start_of_turn>",
    "<end_of_turn>",
    "<|im_start|>",
    "<|im_end|>",
)
PAD_ID, EOS_ID, BOS_ID = 0, 1, 2

# Gemma 3's conversation format: bos, then `<start_of_turn>ROLE\n…<end_of_turn>\n` per turn,
# the assistant called `model`, a system message folded into the first user turn, roles
# that must alternate, content a string or a list of {"type": "text", "text": …} parts.
GEMMA_CHAT_TEMPLATE = """\
{{ bos_token }}
{%- if messages[0]['role'] == 'system' -%}
    {%- if messages[0]['content'] is string -%}
        {%- set system_text = messages[0]['content'] -%}
    {%- else -%}
        {%- set system_text = messages[0]['content'][0]['text'] -%}
    {%- endif -%}
    {%- set first_user_prefix = system_text + '\n\n' -%}
    {%- set turns = messages[1:] -%}
{%- else -%}
    {%- set first_user_prefix = '' -%}
    {%- set turns = messages -%}
{%- endif -%}
{%- for message in turns -%}
    {%- if (message['role'] == 'user') != (loop.index0 % 2 == 0) -%}
        {{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}
    {%- endif -%}
    {%- set role = 'model' if message['role'] == 'assistant' else message['role'] -%}
    {{ '<start_of_turn>' + role + '\n' + (first_user_prefix if loop.first else '') }}
    {%- if message['content'] is string -%}
        {{ message['content'] | trim }}
    {%- else -%}
        {%- for part in message['content'] if part['type'] == 'text' -%}
            {{ part['text'] | trim }}
        {%- endfor -%}
    {%- endif -%}
    {{ '<end_of_turn>\n' }}
{%- endfor -%}
{%- if add_generation_prompt -%}
    {{ '<start_of_turn>model\n' }}
{%- endif -%}
"""

# ChatML, as Qwen models use it: a default system turn, tools listed as JSON in the system
# turn, `<|im_start|>ROLE\n…<|im_end|>\n` per message. Relies on trim_blocks/lstrip_blocks.
CHATML_CHAT_TEMPLATE = """\
{% for message in messages %}
{% if loop.first and message['role'] != 'system' %}
<|im_start|>system
You are a helpful assistant.
{% if tools %}
Tools:
{% for tool in tools %}
{{ tool | tojson }}
{% endfor %}
{% endif %}
<|im_end|>
{% endif %}
<|im_start|>{{ message['role'] }}
{{ message['content'] }}<|im_end|>
{% endfor %}
{% if add_generation_prompt %}
<|im_start|>assistant
{% endif %}
"""

# Standard-library modules whose docstrings make the tokenizer's training text: English
# enough for a few thousand merges, and the same on every machine with this Python.
_CORPUS_MODULES = (
    "argparse",
    "collections",
    "dataclasses",
    "functools",
    "inspect",
    "itertools",
    "json",
    "logging",
    "os",
    "pathlib",
    "subprocess",
    "textwrap",
    "threading",
    "typing",
)


def corpus() -> list[str]:
    """The tokenizer's training lines, in a fixed order."""
    import importlib

    lines: list[str] = []
    for name in _CORPUS_MODULES:
        module = importlib.import_module(name)
        for _, member in sorted(inspect.getmembers(module), key=lambda kv: kv[0]):
            doc = inspect.getdoc(member)
            if doc:
                lines.extend(line for line in doc.splitlines() if line.strip())
    return lines


def train_tokenizer(vocab_size: int) -> Any:
    """A byte-level BPE whose post-processor puts <bos> first, as Gemma/Llama tokenizers do."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=list(SPECIALS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(corpus(), trainer=trainer)
    tokenizer.post_processor = processors.TemplateProcessing(
        single="<bos> $A", pair="<bos> $A <bos> $B", special_tokens=[("<bos>", BOS_ID)]
    )
    return tokenizer


# What the seed and the demo model share: the vocabulary and special tokens of the one
# tokenizer, one KV head, and Gemma-3's sliding window of 32 ahead of full attention.
SHARED_CONFIG: dict[str, Any] = {
    "vocab_size": 2048,
    "num_attention_heads": 4,
    "num_key_value_heads": 1,
    "sliding_window": 32,
    "max_position_embeddings": 4096,
    "pad_token_id": PAD_ID,
    "eos_token_id": EOS_ID,
    "bos_token_id": BOS_ID,
}


def seed_config() -> Any:
    """The upstream seed's mini Gemma-3 (random weights, default initialisation, tied)."""
    from transformers import Gemma3TextConfig

    return Gemma3TextConfig(
        **SHARED_CONFIG,
        hidden_size=320,
        intermediate_size=1280,
        num_hidden_layers=3,
        head_dim=80,
        query_pre_attn_scalar=80,
        layer_types=["sliding_attention", "sliding_attention", "full_attention"],
    )


def demo_config() -> Any:
    """The seed's architecture made small enough that `make demo` builds it in seconds:
    hidden 128, 2 layers (sliding window 32, then full attention), the same vocabulary and
    tokenizer, untied embeddings with `initializer_range` 0.1 (varied greedy tokens)."""
    from transformers import Gemma3TextConfig

    return Gemma3TextConfig(
        **SHARED_CONFIG,
        hidden_size=128,
        intermediate_size=256,
        num_hidden_layers=2,
        head_dim=32,
        query_pre_attn_scalar=32,
        layer_types=["sliding_attention", "full_attention"],
        initializer_range=0.1,
        tie_word_embeddings=False,
    )


def save_tokenizer(tokenizer_object: Any, chat_template: str | None, folder: Path) -> None:
    """`tokenizer_object` as transformers saves a Gemma tokenizer into `folder`
    (tokenizer.json, and tokenizer_config.json naming the special tokens and holding
    `chat_template`, None for none)."""
    import transformers

    hf: Any = transformers  # transformers' classes are untyped for mypy's strict mode
    tokenizer = hf.PreTrainedTokenizerFast(
        tokenizer_object=tokenizer_object,
        bos_token="<bos>",
        eos_token="<eos>",
        pad_token="<pad>",
        unk_token="<unk>",
    )
    tokenizer.chat_template = chat_template
    tokenizer.save_pretrained(folder)


def write_folder(
    folder: Path, config: Any, chat_template: str | None = GEMMA_CHAT_TEMPLATE, seed: int = SEED
) -> Path:
    """save_pretrained a random-weight model of `config` plus a trained tokenizer (with
    `chat_template`, None for none) into `folder`, atomically: a half-written folder never
    takes its place."""
    import torch
    import transformers

    hf: Any = transformers  # transformers' classes are untyped for mypy's strict mode

    folder = Path(folder)
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=folder.parent))
    try:
        torch.manual_seed(seed)
        model = hf.AutoModelForCausalLM.from_config(config, dtype=torch.float32)
        model.save_pretrained(staging)  # safetensors, config.json, generation_config.json
        save_tokenizer(train_tokenizer(config.vocab_size), chat_template, staging)
        staging.chmod(0o755)
        if folder.exists():
            shutil.rmtree(folder)
        staging.rename(folder)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return folder


def main(argv: list[str]) -> int:
    demo = "--demo" in argv
    argv = [a for a in argv if a != "--demo"]
    folder = Path(argv[0]) if argv else DEFAULT_FOLDER
    # torch/torchao print known-harmless lines on import (listed in trt_edge.library_noise).
    from trt_edge.library_noise import quiet_library_noise

    with quiet_library_noise():
        from transformers.utils import logging

        hf_logging: Any = logging
        hf_logging.set_verbosity_error()
        hf_logging.disable_progress_bar()
        write_folder(folder, demo_config() if demo else seed_config())
    print(f"wrote {folder}: " + ", ".join(sorted(p.name for p in folder.iterdir())))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
