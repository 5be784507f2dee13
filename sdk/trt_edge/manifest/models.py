"""The manifest's shape as pydantic v2 models: the single source of `manifests/schema.json`.

These models check structure and types only (step 2, schema). Cross-field rules —
symbols vs profiles, phase references, files on disk, target ids — are the
semantic step's job, where each problem can be reported with its own location.
Unknown keys are rejected everywhere (`extra="forbid"`) and values are strict
(`"1"` is not an integer, `1.0` is not a version string): a typo must never be
silently ignored in a file that decides what ships to a device.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

# Only names from pydantic's core modules: `pydantic.types` (Discriminator, Tag, Strict*)
# costs ~0.1 s of import time, and `trt-edge validate` must start fast.
from pydantic import BaseModel, ConfigDict, Field
from trt_edge_runner.dtypes import DTYPE_NAMES

from trt_edge.manifest.vocabulary import MAX_EXTENT, NAME_PATTERN, VALUES_MAX, VALUES_MIN

if TYPE_CHECKING:
    Dtype = str
else:
    # The names of the one dtype table (trt_edge_runner.dtypes), in its order: pydantic
    # checks them and writes them into the schema's enum.
    Dtype = Literal[DTYPE_NAMES]


# Bounds live in vocabulary.py (int32 extents for TensorRT, int64 `values`).
Extent = Annotated[int, Field(le=MAX_EXTENT)]
ValueBound = Annotated[int, Field(ge=VALUES_MIN, le=VALUES_MAX)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, populate_by_name=False)


class Metadata(_Strict):
    name: str = Field(
        pattern=NAME_PATTERN,
        description="Model name: lower-case letters, digits and '-', starting with a letter or "
        "digit. Names the bundle directory <name>-<version>.",
    )
    version: str = Field(min_length=1, description="Model version, e.g. 0.1.0 (a string).")
    description: str | None = Field(default=None, description="Free text for people.")


class HuggingFaceSource(_Strict):
    path: str = Field(
        min_length=1,
        description="A local save_pretrained folder (config.json, safetensors weights, "
        "tokenizer), relative to the manifest. Never downloaded.",
    )
    max_cache_len: int = Field(
        ge=1,
        le=MAX_EXTENT,
        description="KV-cache slots kept inside the program: the most positions (prompt plus "
        "generated tokens) one sequence can reach. At least the largest profile's seq, at most "
        "the model's max_position_embeddings.",
    )
    attention: Literal["all", "filled", "fused"] = Field(
        default="filled",
        description="Which cache slots attention reads, and how. `filled` (default): only the "
        "slots written so far, rounded up to a bucket of 64 — decode then costs what the "
        "context holds, not what the cache could hold; the method gains a third input, "
        "cache_window [window], whose length is that bucket (bundle.json llm section version "
        "2, fed by both runners). `fused`: one attention operator per layer reads the cache in "
        "place up to the call's last position (ExecuTorch's llama::custom_sdpa; trt-edge-run "
        "carries its own kernel) — no window copy, the fastest decode at a long context; CPU "
        "backends (xnnpack, portable) and full-attention models only; two inputs. `all`: every "
        "one of the max_cache_len slots on every call, two inputs (llm section version 1) — "
        "the opt-out, for a runner that predates version 2.",
    )


class ModelSource(_Strict):
    entrypoint: str | None = Field(
        default=None,
        description="'file.py:function' (file relative to the manifest) or "
        "'package.module:function' returning the torch.nn.Module to export.",
    )
    exported: str | None = Field(
        default=None,
        description="Alternative to entrypoint: a saved torch.export program (.pt2), "
        "relative to the manifest.",
    )
    huggingface: HuggingFaceSource | None = Field(
        default=None,
        description="Alternative to entrypoint: a Hugging Face causal LM (Gemma-3, Llama, "
        "Qwen2, Qwen3) built with a static KV cache inside the program; `inputs` may then be "
        "omitted (input_ids [1, seq], cache_position [seq]).",
    )
    requirements: list[str] = Field(
        default_factory=list,
        description="pip requirement lines the model needs to build (e.g. "
        "'transformers==5.23.0'); a local build checks each is installed at that version.",
    )


class InputSpec(_Strict):
    name: str = Field(description="Argument name of forward(), in argument order.")
    dtype: Dtype
    shape: list[Extent | str] = Field(
        description="Static extents as integers, dynamic ones as symbol names (e.g. [1, seq])."
    )
    values: list[ValueBound] | None = Field(
        default=None,
        min_length=2,
        max_length=2,
        description="[low, high) for integer inputs: the values example and validation "
        "inputs are drawn from (token ids, positions).",
    )


class DimRange(_Strict):
    min: int = Field(le=MAX_EXTENT, description="Smallest extent this profile accepts (>= 1).")
    opt: int = Field(
        le=MAX_EXTENT, description="Extent TensorRT tunes kernels for (min <= opt <= max)."
    )
    max: int = Field(
        le=MAX_EXTENT, description="Largest extent this profile accepts (<= 2**31-1: int32)."
    )


DimValue = Extent | DimRange


class ProfileSpec(_Strict):
    name: str = Field(description="Label for people and the phase map; compiles to an index.")
    dims: dict[str, DimValue] = Field(
        default_factory=dict,
        description="Per symbol: an integer (min = opt = max) or {min, opt, max}.",
    )


class Runtime(_Strict):
    policy: Literal["pinned", "auto"] = Field(
        description="pinned: every phase names its profile. auto: sticky first-fit picks the "
        "profile from the input shapes."
    )
    phases: dict[str, str | int] = Field(
        default_factory=dict,
        description="Phase name -> profile name or index (or 'auto' under policy auto).",
    )
    generation: Literal["tiny_llm"] | None = Field(
        default=None,
        description="The generation contract the model implements, declared into bundle.json "
        "for `trt-edge generate` and the device runner. tiny_llm: inputs (token ids [1, seq], "
        "start position [1], then the caches), outputs (logits, then the updated caches in the "
        "caches' order). A Hugging Face causal LM declares its own (bundle.json llm).",
    )
    slots: int = Field(
        default=1,
        ge=1,
        le=64,
        description="Conversations one loaded Hugging Face causal LM serves at once: its program "
        "holds this many KV caches, and with more than 1 the profiles give a `batch` dim (how "
        "many conversations one call advances: e.g. decode batch 1..4, prefill batch 1).",
    )


class Quantize(_Strict):
    linear: Literal["8da4w", "8da8w", "4w", "8w"] | None = Field(
        default=None,
        description="Linear layers: 8da4w/8da8w (8-bit dynamic activations, 4-bit grouped or "
        "8-bit per-channel weights) or weight-only 4w/8w (torchao quantize_).",
    )
    group_size: int = Field(
        default=32,
        ge=1,
        description="Weights per scale for grouped (4-bit) schemes; a multiple of 32.",
    )
    embedding: Literal["4w", "8w"] | None = Field(
        default=None, description="Embedding tables: weight-only 4-bit or 8-bit, grouped."
    )


class Build(_Strict):
    backend: Literal["auto", "tensorrt", "xnnpack", "portable"] = Field(
        default="auto",
        description="auto: TensorRT where the target has it, XNNPACK on CPU targets.",
    )
    precision: Literal["fp32", "fp16", "bf16", "int8", "fp8"] = Field(
        default="fp32",
        description="TensorRT precisions (enabled_precisions); CPU backends build fp32.",
    )
    quantize: Quantize | None = Field(
        default=None,
        description="Quantize weights before export (xnnpack; docs/quantization.md).",
    )
    targets: list[str] = Field(
        default_factory=lambda: ["cpu-x86_64"],
        description="Target ids from the target catalog (trt-edge validate lists them).",
    )
    memory_headroom_mib: int | None = Field(
        default=None,
        ge=0,
        description="MiB of a board's memory kept free for the OS, the agent and the "
        "CUDA/TensorRT libraries when judging whether the bundle fits a target "
        "(default 1024). The build warns when a target's board cannot hold the bundle.",
    )


class Parity(_Strict):
    atol: float = Field(default=1.0e-3, ge=0)
    rtol: float = Field(default=1.0e-3, ge=0)


class Budget(_Strict):
    max_abs: float | None = Field(default=None, ge=0, description="Largest logit difference.")
    min_agreement: float | None = Field(
        default=None, ge=0, le=1, description="Share of greedy next tokens equal to eager's."
    )
    max_kl: float | None = Field(
        default=None, ge=0, description="Mean KL divergence of next-token distributions."
    )


BudgetKey = Literal[
    "fp32", "8da4w", "8da8w", "4w", "8w", "embedding-4w", "embedding-8w", "fp16", "int8", "fp8"
]


class Validate(_Strict):
    parity: Parity = Field(default_factory=Parity)
    budgets: dict[BudgetKey, Budget] = Field(
        default_factory=dict,
        description="Per precision (the linear scheme, embedding-<scheme>, or a TensorRT "
        "precision): how far a quantized causal LM may be from eager fp32 "
        "(docs/quantization.md gives the defaults).",
    )


class Manifest(_Strict):
    """A trt-edge model manifest (apiVersion trt-edge/v1)."""

    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        title="trt-edge manifest",
        json_schema_extra={"$id": "https://trt-edge.dev/schemas/manifest-v1.json"},
    )

    apiVersion: Literal["trt-edge/v1"]
    kind: Literal["Model"]
    metadata: Metadata
    model: ModelSource
    inputs: Annotated[list[InputSpec], Field(min_length=1)] | None = Field(
        default=None,
        description="forward() arguments, in order (implied for a huggingface model).",
    )
    profiles: list[ProfileSpec] = Field(
        default_factory=list,
        description="Ordered optimization profiles: position = the profile index that ships.",
    )
    runtime: Runtime | None = Field(
        default=None, description="Which profile each phase uses (default: policy auto)."
    )
    build: Build = Field(default_factory=Build)
    validate_: Validate = Field(default_factory=Validate, alias="validate")
