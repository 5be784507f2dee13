"""Mini Hugging Face folders and manifests for the LLM tests (random weights, no download).

Each architecture the recipe supports gets a config small enough that export +
lowering take seconds: 2 layers, hidden 64, vocabulary 512, `max_cache_len` 48,
profiles decode {seq 1} / prefill {2..24}. The Gemma-3 mini has a sliding window of
8 (shorter than the largest prefill) and untied embeddings; the seed's tied,
default-initialised weights make greedy decoding repeat one token, a weak test of
generate. `initializer_range` 0.1 gives varied greedy tokens with clear top-1/top-2
gaps, so token equality means something. Folders are written with the example's
own writer (`examples/gemma3/write_model.py`: `save_pretrained` + a trained BPE).
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import shutil
from pathlib import Path
from types import ModuleType
from typing import Any

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "gemma3"
ARCHITECTURES = ("gemma3", "llama", "qwen2", "qwen3")
MAX_CACHE_LEN = 48
PREFILL_MAX = 24
SLIDING_WINDOW = 8
# The `timings` object of a generate document: the same keys from `trt-edge generate --json`
# and `trt-edge-run --generate --json`.
GENERATE_TIMINGS = frozenset(
    {
        "prefill_ms",
        "time_to_first_token_ms",
        "decode_ms_per_token",
        "decode_tokens_per_s",
        "tokens_per_s",
        "total_ms",
    }
)

MANIFEST = """\
apiVersion: trt-edge/v1
kind: Model
metadata: {{name: mini-{arch}, version: 0.1.0}}
model:
  huggingface: {{path: ./folder, max_cache_len: {max_cache_len}}}
  requirements: {requirements}
profiles:
  - name: decode
    dims: {{seq: 1}}
  - name: prefill
    dims: {{seq: {{min: 2, opt: 8, max: {prefill_max}}}}}
runtime:
  policy: pinned
  phases: {{prefill: prefill, decode: decode}}
build:
  backend: xnnpack
  targets: [cpu-x86_64]
"""


# `runtime.slots` minis (`slots_manifest_text`): four conversations, decode advancing 1..4 at
# once, prefill one at a time; `attention: all` (slots take no other yet).
SLOTS = 4
# The quantized slots bundles' linear layers (tests/llm/test_slots.py, tests/serve).
LINEAR_8DA4W = "{linear: 8da4w, group_size: 32}"
SLOTS_PROFILES = """\
profiles:
  - name: decode
    dims: {{batch: {{min: 1, opt: {slots}, max: {slots}}}, seq: 1}}
  - name: prefill
    dims: {{batch: 1, seq: {{min: 2, opt: 8, max: {prefill_max}}}}}
runtime:
  policy: pinned
  slots: {slots}
  phases: {{prefill: prefill, decode: decode}}
"""

# A random-weight mini's next-token distributions are near-flat (eager top-2 gaps of a few
# hundredths), so 4-bit weights move its greedy tokens far more than a trained model's: a
# quantized mini declares its own budget against eager fp32, as tests/llm/test_quantization.py.
QUANTIZED_BUDGET = """\
validate:
  budgets:
    8da4w: {min_agreement: 0.25, max_kl: 0.2}
"""


def example_writer() -> ModuleType:
    """examples/gemma3/write_model.py as a module (its folder writer and tokenizer)."""
    spec = importlib.util.spec_from_file_location("gemma3_write_model", EXAMPLE / "write_model.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def mini_config(arch: str) -> Any:
    import transformers

    writer = example_writer()
    common: dict[str, Any] = {
        "vocab_size": 512,
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "max_position_embeddings": 256,
        "initializer_range": 0.1,
        "pad_token_id": writer.PAD_ID,
        "eos_token_id": writer.EOS_ID,
        "bos_token_id": writer.BOS_ID,
    }
    if arch == "gemma3":
        return transformers.Gemma3TextConfig(
            num_key_value_heads=1,
            head_dim=16,
            query_pre_attn_scalar=16,
            sliding_window=SLIDING_WINDOW,
            layer_types=["sliding_attention", "full_attention"],
            tie_word_embeddings=False,
            **common,
        )
    if arch == "llama":
        return transformers.LlamaConfig(num_key_value_heads=2, tie_word_embeddings=False, **common)
    if arch == "qwen2":
        return transformers.Qwen2Config(num_key_value_heads=2, tie_word_embeddings=True, **common)
    if arch == "qwen3":
        return transformers.Qwen3Config(
            num_key_value_heads=2, head_dim=16, tie_word_embeddings=True, **common
        )
    raise ValueError(arch)


def chat_template(arch: str) -> str | None:
    """The mini's chat template: Gemma's format for gemma3, ChatML for Qwen, none for Llama
    (so a bundle without a template is built and tested too)."""
    writer = example_writer()
    if arch == "gemma3":
        return str(writer.GEMMA_CHAT_TEMPLATE)
    if arch in ("qwen2", "qwen3"):
        return str(writer.CHATML_CHAT_TEMPLATE)
    return None


def manifest_text(
    arch: str, max_cache_len: int = MAX_CACHE_LEN, requirements: list[str] | None = None
) -> str:
    """The mini's manifest; `requirements` default to the installed transformers' pin."""
    if requirements is None:
        requirements = [f"transformers=={importlib.metadata.version('transformers')}"]
    return MANIFEST.format(
        arch=arch,
        max_cache_len=max_cache_len,
        prefill_max=PREFILL_MAX,
        requirements=json.dumps(requirements),
    )


def slots_manifest_text(arch: str, folder: Path, quantize: str | None = None) -> str:
    """The mini's manifest with SLOTS conversations, its folder at `folder`; `quantize`: a
    `build.quantize` mapping written as YAML flow (e.g. `{linear: 8da4w, group_size: 32}`)."""
    text = manifest_text(arch)
    head, rest = text.split("profiles:\n", 1)
    build = rest[rest.index("build:\n") :]
    if quantize is not None:
        build += f"  quantize: {quantize}\n" + QUANTIZED_BUDGET
    head = head.replace(
        f"{{path: ./folder, max_cache_len: {MAX_CACHE_LEN}}}",
        f"{{path: {folder}, max_cache_len: {MAX_CACHE_LEN}, attention: all}}",
    )
    profiles = SLOTS_PROFILES.format(slots=SLOTS, prefill_max=PREFILL_MAX)
    return head + profiles + build


def write_project(root: Path, arch: str, requirements: list[str] | None = None) -> Path:
    """`root/manifest.yaml` + `root/folder/` (the save_pretrained mini); the manifest path.
    `requirements`: the manifest's `model.requirements` (default: the installed
    transformers' pin)."""
    from transformers.utils import logging

    hf_logging: Any = logging
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    root.mkdir(parents=True, exist_ok=True)
    writer = example_writer()
    writer.write_folder(root / "folder", mini_config(arch), chat_template(arch))
    manifest = root / "manifest.yaml"
    manifest.write_text(manifest_text(arch, requirements=requirements), encoding="utf-8")
    return manifest


def copy_example(root: Path) -> Path:
    """examples/gemma3 (manifest and writer) copied into `root`, without a written folder."""
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns("mini-gemma3", "__pycache__"))
    return root
