"""`model.huggingface` and `model.requirements`: each mistake at its place, with its message.

`trt-edge validate` reads the folder with json and a directory listing only — never
the weights, never transformers — so the folders here are config.json plus
placeholder files. Each case edits the base manifest or the folder in one spot and
pins line, column (the caret's token), path and message, as the golden mistakes do.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from trt_edge.manifest import load_manifest

BASE = """\
apiVersion: trt-edge/v1
kind: Model
metadata: {name: mini-llm, version: 0.1.0}
model:
  huggingface: {path: ./folder, max_cache_len: 64}
  requirements: ["transformers==5.23.0", "tokenizers>=0.22"]
profiles:
  - name: decode
    dims: {seq: 1}
  - name: prefill
    dims: {seq: {min: 2, opt: 16, max: 32}}
runtime:
  policy: pinned
  phases: {prefill: prefill, decode: decode}
"""

LLAMA = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "vocab_size": 1000,
    "max_position_embeddings": 128,
}
SUPPORTED = "Gemma3ForCausalLM, LlamaForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM"


def write_folder(
    folder: Path,
    config: dict[str, Any] | str | None = None,
    files: tuple[str, ...] = ("model.safetensors", "tokenizer.json"),
) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    if config is not None:
        text = config if isinstance(config, str) else json.dumps(config)
        (folder / "config.json").write_text(text, encoding="utf-8")
    for name in files:
        (folder / name).write_bytes(b"{}" if name.endswith(".json") else b"")


@dataclass(frozen=True)
class Case:
    id: str
    line: int
    token: str  # the caret points at the first occurrence of this on that line
    path: str
    message: str  # `{dir}` stands for the manifest's directory
    old: str = ""
    new: str = ""
    config: dict[str, Any] | str | None = field(default_factory=lambda: dict(LLAMA))
    files: tuple[str, ...] = ("model.safetensors", "tokenizer.json")
    extra: dict[str, str] = field(default_factory=dict)  # more files: name -> text
    severity: str = "error"
    stage: str = "semantic"


CASES = [
    Case(
        "folder-missing",
        5,
        "./nofolder",
        "model.huggingface.path",
        "folder {dir}/nofolder does not exist; the path is relative to the manifest (write the "
        "model there with save_pretrained)",
        old="path: ./folder",
        new="path: ./nofolder",
    ),
    Case(
        "unsupported-architecture",
        5,
        "./folder",
        "model.huggingface.path",
        "{dir}/folder/config.json: architecture MistralForCausalLM is not supported by the "
        f"Hugging Face recipe (supported: {SUPPORTED})",
        config={**LLAMA, "architectures": ["MistralForCausalLM"], "model_type": "mistral"},
    ),
    Case(
        "multimodal-gemma3",
        5,
        "./folder",
        "model.huggingface.path",
        "{dir}/folder/config.json: architecture Gemma3ForConditionalGeneration is not supported "
        f"by the Hugging Face recipe (supported: {SUPPORTED})",
        config={
            **LLAMA,
            "architectures": ["Gemma3ForConditionalGeneration"],
            "model_type": "gemma3",
        },
    ),
    Case(
        "model-type-disagrees",
        5,
        "./folder",
        "model.huggingface.path",
        "{dir}/folder/config.json: Gemma3ForCausalLM needs model_type 'gemma3_text', config.json "
        "says 'gemma3' (a multimodal or other variant is not supported)",
        config={**LLAMA, "architectures": ["Gemma3ForCausalLM"], "model_type": "gemma3"},
    ),
    Case(
        "no-config",
        5,
        "./folder",
        "model.huggingface.path",
        "{dir}/folder has no config.json: not a save_pretrained folder; write it with "
        "model.save_pretrained(folder) and tokenizer.save_pretrained(folder)",
        config=None,
    ),
    Case(
        "config-not-json",
        5,
        "./folder",
        "model.huggingface.path",
        "{dir}/folder/config.json cannot be read as JSON: Expecting property name enclosed in "
        "double quotes: line 1 column 2 (char 1)",
        config="{architectures",
    ),
    Case(
        "weights-missing",
        5,
        "./folder",
        "model.huggingface.path",
        "{dir}/folder has no weights: neither model.safetensors nor model.safetensors.index.json;"
        " write them with model.save_pretrained(folder)",
        files=("tokenizer.json",),
    ),
    Case(
        "pickled-weights-only",
        5,
        "./folder",
        "model.huggingface.path",
        "{dir}/folder holds pytorch_model.bin (pickled weights) but no model.safetensors: the "
        "recipe loads safetensors only; re-save with model.save_pretrained(folder)",
        files=("pytorch_model.bin", "tokenizer.json"),
    ),
    Case(
        "shard-missing",
        5,
        "./folder",
        "model.huggingface.path",
        "{dir}/folder: weight file(s) model-00002-of-00002.safetensors listed in "
        "model.safetensors.index.json are missing; copy the whole folder",
        files=("model-00001-of-00002.safetensors", "tokenizer.json"),
        extra={
            "model.safetensors.index.json": json.dumps(
                {
                    "weight_map": {
                        "a": "model-00001-of-00002.safetensors",
                        "b": "model-00002-of-00002.safetensors",
                    }
                }
            )
        },
    ),
    Case(
        "cache-below-profile-reach",
        5,
        "16",
        "model.huggingface.max_cache_len",
        "max_cache_len 16 is below the largest profile's reach: profile 'prefill' (#1) accepts "
        "seq up to 32, and one call writes seq positions into the cache; raise max_cache_len to "
        "at least 32 or lower that max",
        old="max_cache_len: 64",
        new="max_cache_len: 16",
    ),
    Case(
        "cache-above-max-position-embeddings",
        5,
        "256",
        "model.huggingface.max_cache_len",
        "max_cache_len 256 is above the model's max_position_embeddings 128 "
        "({dir}/folder/config.json): positions past it were never trained; use at most 128",
        old="max_cache_len: 64",
        new="max_cache_len: 256",
    ),
    Case(
        "cache-zero",
        5,
        "0",
        "model.huggingface.max_cache_len",
        "must be >= 1, got 0 (a number)",
        old="max_cache_len: 64",
        new="max_cache_len: 0",
        stage="schema",
    ),
    Case(
        "no-one-token-profile",
        7,
        "profiles",
        "profiles",
        "no profile accepts seq 1, but decoding feeds one token per call: add one, e.g. "
        "- {name: decode, dims: {seq: 1}}",
        old="dims: {seq: 1}",
        new="dims: {seq: 4}",
    ),
    Case(
        "inputs-written-wrong",
        9,
        "positions",
        "inputs[1].name",
        "name must be 'cache_position' here; a huggingface model's inputs are exactly: input_ids "
        "int64 [1, seq] values [0, 1000), cache_position int64 [seq] values [0, 64), cache_window "
        "int64 [window] values [0, 64); or leave `inputs` out",
        old="profiles:\n",
        new="inputs:\n  - {name: input_ids, dtype: int64, shape: [1, seq]}\n"
        "  - {name: positions, dtype: int64, shape: [seq]}\n"
        "  - {name: cache_window, dtype: int64, shape: [window]}\nprofiles:\n",
    ),
    Case(
        "inputs-wrong-values",
        8,
        "[0, 512]",
        "inputs[0].values",
        "values must be [0, 1000) here; a huggingface model's inputs are exactly: input_ids int64"
        " [1, seq] values [0, 1000), cache_position int64 [seq] values [0, 64), cache_window int64"
        " [window] values [0, 64); or leave `inputs` out",
        old="profiles:\n",
        new="inputs:\n  - {name: input_ids, dtype: int64, shape: [1, seq], values: [0, 512]}\n"
        "  - {name: cache_position, dtype: int64, shape: [seq]}\n"
        "  - {name: cache_window, dtype: int64, shape: [window]}\nprofiles:\n",
    ),
    Case(
        "entrypoint-and-huggingface",
        6,
        "huggingface",
        "model.huggingface",
        "give either `entrypoint` or `huggingface`, not both: remove one",
        old="model:\n",
        new="model:\n  entrypoint: model.py:build\n",
        extra={"../model.py": "def build(): ..."},
    ),
    Case(
        "unknown-key",
        5,
        "revision",
        "model.huggingface.revision",
        "unknown key 'revision'; allowed here: path, max_cache_len, attention",
        old="max_cache_len: 64}",
        new="max_cache_len: 64, revision: main}",
        stage="schema",
    ),
    Case(
        "requirement-url",
        6,
        '"tokenizers @',
        "model.requirements[1]",
        "'tokenizers @ https://example.com/t.whl' points at a URL; name a released version from "
        "the package index instead (write it like transformers==5.23.0)",
        old='"tokenizers>=0.22"',
        new='"tokenizers @ https://example.com/t.whl"',
    ),
    Case(
        "requirement-option",
        6,
        '"-r',
        "model.requirements[1]",
        "'-r requirements.txt' is a pip option, not a requirement; list packages only (write it "
        "like transformers==5.23.0)",
        old='"tokenizers>=0.22"',
        new='"-r requirements.txt"',
    ),
    Case(
        "requirement-twice",
        6,
        '"Transformers',
        "model.requirements[1]",
        "'Transformers' is already required by model.requirements[0]: give each package once",
        old='"tokenizers>=0.22"',
        new='"Transformers>=5"',
    ),
    Case(
        "no-tokenizer",
        5,
        "./folder",
        "model.huggingface.path",
        "{dir}/folder has no tokenizer (tokenizer.json or tokenizer.model): the bundle will carry"
        " none and `trt-edge generate` will take --prompt-ids only; save the tokenizer into the "
        "folder with tokenizer.save_pretrained(folder)",
        files=("model.safetensors",),
        severity="warning",
    ),
]


def _project(tmp_path: Path, case: Case) -> Path:
    write_folder(tmp_path / "folder", case.config, case.files)
    for name, text in case.extra.items():
        (tmp_path / "folder" / name).write_text(text, encoding="utf-8")
    text = BASE.replace(case.old, case.new, 1) if case.old else BASE
    assert not case.old or case.old in BASE, case.id
    manifest = tmp_path / "manifest.yaml"
    manifest.write_text(text, encoding="utf-8")
    return manifest


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_huggingface_mistake_is_reported_at_its_place(case: Case, tmp_path: Path) -> None:
    manifest = _project(tmp_path, case)
    result = load_manifest(manifest)
    found = [d for d in result.diagnostics if d.severity == case.severity]
    assert len(found) == 1, [str(d) for d in result.diagnostics]
    d = found[0]
    source_line = manifest.read_text(encoding="utf-8").splitlines()[case.line - 1]
    assert d.message == case.message.replace("{dir}", str(tmp_path.resolve()))
    assert (d.line, d.col) == (case.line, source_line.index(case.token) + 1), str(d)
    assert d.path == case.path
    assert d.stage == case.stage
    assert (result.manifest is None) == (case.severity == "error")


def test_the_bad_requirement_line_names_what_pip_would_accept(tmp_path: Path) -> None:
    case = Case("x", 6, "", "", "", old='"tokenizers>=0.22"', new='"transformers=5.23"')
    result = load_manifest(_project(tmp_path, case))
    (d,) = result.errors
    assert d.path == "model.requirements[1]"
    assert d.message.startswith("'transformers=5.23' is not a pip requirement line (")
    assert d.message.endswith("); write it like transformers==5.23.0")


def test_inputs_are_implied_and_requirements_kept_in_order(tmp_path: Path) -> None:
    result = load_manifest(_project(tmp_path, Case("ok", 0, "", "", "")))
    assert result.ok, [str(d) for d in result.diagnostics]
    manifest = result.manifest
    assert manifest is not None and manifest.huggingface is not None
    assert [(t.name, t.dtype, t.shape, t.values) for t in manifest.inputs] == [
        ("input_ids", "int64", (1, "seq"), (0, 1000)),
        ("cache_position", "int64", ("seq",), (0, 64)),
        ("cache_window", "int64", ("window",), (0, 64)),
    ]
    assert manifest.requirements == ("transformers==5.23.0", "tokenizers>=0.22")
    assert manifest.huggingface.folder == (tmp_path / "folder").resolve()
    assert (manifest.huggingface.architecture, manifest.huggingface.max_cache_len) == (
        "LlamaForCausalLM",
        64,
    )
    assert manifest.entrypoint is None and manifest.exported is None
    assert manifest.export_domain() == {"seq": (1, 32), "window": (1, 64)}


def test_attention_all_opts_out_of_the_window_input(tmp_path: Path) -> None:
    """`filled` is the default; `attention: all` keeps the two-input method (llm version 1),
    whose every profile has no window dimension."""
    case = Case(
        "all",
        0,
        "",
        "",
        "",
        old="max_cache_len: 64}",
        new="max_cache_len: 64, attention: all}",
    )
    result = load_manifest(_project(tmp_path, case))
    assert result.ok, [str(d) for d in result.diagnostics]
    manifest = result.manifest
    assert manifest is not None and manifest.huggingface is not None
    assert manifest.huggingface.attention == "all"
    assert [t.name for t in manifest.inputs] == ["input_ids", "cache_position"]
    assert all("window" not in p.dims for p in manifest.profiles)
    assert manifest.export_domain() == {"seq": (1, 32)}


def test_inputs_written_exactly_as_implied_are_accepted(tmp_path: Path) -> None:
    inputs = (
        "inputs:\n  - {name: input_ids, dtype: int64, shape: [1, seq], values: [0, 1000]}\n"
        "  - {name: cache_position, dtype: int64, shape: [seq]}\n"
        "  - {name: cache_window, dtype: int64, shape: [window]}\nprofiles:\n"
    )
    result = load_manifest(_project(tmp_path, Case("ok", 0, "", "", "", "profiles:\n", inputs)))
    assert result.ok and not result.diagnostics, [str(d) for d in result.diagnostics]


def test_any_other_model_still_needs_its_inputs(
    write_manifest: Callable[[str], Path], base_text: str
) -> None:
    start = base_text.index("inputs:")
    end = base_text.index("profiles:")
    result = load_manifest(write_manifest(base_text[:start] + base_text[end:]))
    messages = [(d.path, d.message, d.stage) for d in result.errors]
    assert messages == [("inputs", "missing required key 'inputs'", "schema")]


def test_validating_a_huggingface_manifest_imports_neither_torch_nor_transformers(
    tmp_path: Path,
) -> None:
    manifest = _project(tmp_path, Case("ok", 0, "", "", ""))
    code = (
        "import sys\n"
        "from trt_edge.cli.main import main\n"
        f"code = main(['validate', {str(manifest)!r}])\n"
        "heavy = sorted(m for m in ('torch', 'transformers', 'tokenizers', 'executorch') "
        "if m in sys.modules)\n"
        "print(code, heavy)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip().splitlines()[-1] == "0 []"
