"""Write the mini Gemma-3 this example builds: a real save_pretrained folder, no download.

    python write_model.py [FOLDER]        # default: mini-gemma3/ next to this file

The folder is what `save_pretrained` writes for a real checkpoint — config.json,
generation_config.json, model.safetensors — plus a tokenizer (tokenizer.json and
tokenizer_config.json with bos/eos/pad/unk). The weights are random (fixed seed) and
the tokenizer is a byte-level BPE trained here on the standard library's docstrings,
so every run in the same environment writes the same bytes and nothing is fetched
from the Hugging Face hub. The model is the upstream seed's: `Gemma3ForCausalLM`,
hidden 320, 3 layers (sliding, sliding, full attention; window 32), 4 query heads
sharing 1 KV head of dim 80, vocabulary 2048, tied embeddings.

`write_folder(folder, config)` and `train_tokenizer(vocab)` are reused by the tests
to write Llama/Qwen minis the same way.
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

# Special tokens take the first ids, in this order, in every mini folder.
SPECIALS = ("<pad>", "<eos>", "<bos>", "<unk>")
PAD_ID, EOS_ID, BOS_ID = 0, 1, 2

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


def seed_config() -> Any:
    """The upstream seed's mini Gemma-3 (random weights, default initialisation, tied)."""
    from transformers import Gemma3TextConfig

    return Gemma3TextConfig(
        vocab_size=2048,
        hidden_size=320,
        intermediate_size=1280,
        num_hidden_layers=3,
        num_attention_heads=4,
        num_key_value_heads=1,
        head_dim=80,
        query_pre_attn_scalar=80,
        sliding_window=32,
        layer_types=["sliding_attention", "sliding_attention", "full_attention"],
        max_position_embeddings=4096,
        pad_token_id=PAD_ID,
        eos_token_id=EOS_ID,
        bos_token_id=BOS_ID,
    )


def write_folder(folder: Path, config: Any, seed: int = SEED) -> Path:
    """save_pretrained a random-weight model of `config` plus a trained tokenizer into
    `folder`, atomically: a half-written folder never takes its place."""
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
        tokenizer = hf.PreTrainedTokenizerFast(
            tokenizer_object=train_tokenizer(config.vocab_size),
            bos_token="<bos>",
            eos_token="<eos>",
            pad_token="<pad>",
            unk_token="<unk>",
        )
        tokenizer.save_pretrained(staging)
        staging.chmod(0o755)
        if folder.exists():
            shutil.rmtree(folder)
        staging.rename(folder)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return folder


def main(argv: list[str]) -> int:
    folder = Path(argv[0]) if argv else DEFAULT_FOLDER
    # torch/torchao print known-harmless lines on import (listed in trt_edge.library_noise).
    from trt_edge.library_noise import quiet_library_noise

    with quiet_library_noise():
        from transformers.utils import logging

        hf_logging: Any = logging
        hf_logging.set_verbosity_error()
        hf_logging.disable_progress_bar()
        write_folder(folder, seed_config())
    print(f"wrote {folder}: " + ", ".join(sorted(p.name for p in folder.iterdir())))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
