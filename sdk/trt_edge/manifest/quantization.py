"""`build.quantize` and `validate.budgets`: the schemes, which backend runs which, the budgets.

Schemes are named as the ecosystem names them (optimum-executorch's `--qlinear`/
`--qembedding`, ExecuTorch's `export_llm`): linear layers `8da4w` (8-bit dynamic
activations, 4-bit grouped weights), `8da8w` (8-bit per-channel weights), `4w`/`8w`
(weight-only); embeddings `4w`/`8w` (weight-only, grouped). The pipeline applies
them with torchao's `quantize_` (`trt_edge.pipeline.quantize`); TensorRT takes
`build.precision` (fp16/int8/fp8) instead.

What a backend cannot run is refused while the manifest is checked (at the field's
`file:line:col`) and again when `--backend` overrides the manifest (at build time),
from the one table here. Measured on ExecuTorch 1.5.1 + torchao 0.18 (see
docs/quantization.md): XNNPACK runs `8da4w` and `8da8w` linears and both embedding
schemes (fused to the quantized embedding kernels); weight-only `4w`/`8w` linears
lower but compute wrong values there (errors of 10^3..10^6 on a 3-layer probe), so
they are refused. `portable` runs the embedding schemes only (torchao's linear ops
have no portable out-variants). TensorRT takes precisions, not torchao schemes.

Plain data, no torch: `trt-edge validate` reads it.
"""

from __future__ import annotations

from dataclasses import dataclass

LINEAR_SCHEMES = ("8da4w", "8da8w", "4w", "8w")
EMBEDDING_SCHEMES = ("4w", "8w")
TENSORRT_PRECISIONS = ("fp16", "int8", "fp8")
DEFAULT_GROUP_SIZE = 32
GROUP_MULTIPLE = 32  # XNNPACK's 4-bit grouped kernels take groups of multiples of 32

# Budget keys: what a bundle is labelled by (`label`).
BUDGET_KEYS = (
    "fp32",
    "8da4w",
    "8da8w",
    "4w",
    "8w",
    "embedding-4w",
    "embedding-8w",
    *TENSORRT_PRECISIONS,
)


@dataclass(frozen=True)
class Quantization:
    """`build.quantize`, resolved."""

    linear: str | None
    group_size: int
    embedding: str | None

    @property
    def label(self) -> str:
        """The budget key: the linear scheme, else `embedding-<scheme>`."""
        return self.linear or f"embedding-{self.embedding}"

    def describe(self) -> str:
        parts = [f"linear {self.linear}"] if self.linear else []
        if self.embedding:
            parts.append(f"embedding {self.embedding}")
        return ", ".join(parts) + f" (group size {self.group_size})"


@dataclass(frozen=True)
class Budget:
    """How far a bundle of one precision may be from eager fp32 and still pass."""

    max_abs: float  # largest |logit difference| (also the parity atol for that bundle)
    min_agreement: float  # share of greedy next tokens equal to eager's (0..1)
    max_kl: float  # mean KL(eager || bundle) of the next-token distributions, in nats


# Defaults, and why. fp32 keeps the manifest's own atol (exactness is the point there);
# these apply to quantized bundles. Logits of a trained LM spread over ~[-20, 20]:
# - 8-bit weights (8da8w, 8w, int8/fp8) perturb each logit by well under 1 % of that
#   range and rarely flip a confident greedy choice: max_abs 1.0, agreement 0.9, KL 0.05.
# - 4-bit weights cost more (ExecuTorch's and torchao's own 8da4w figures lose a few
#   perplexity points): max_abs 3.0, agreement 0.6, KL 0.3.
# - embedding-only schemes touch one table: between the two.
# - fp16 rounds activations (10 mantissa bits): max_abs 0.5, agreement 0.95, KL 0.01.
# A random-weight mini has flatter distributions than a trained model, so its greedy
# agreement is the hard figure; the manifest overrides any of these (`validate.budgets`).
DEFAULT_BUDGETS: dict[str, Budget] = {
    "8da8w": Budget(1.0, 0.9, 0.05),
    "8w": Budget(1.0, 0.9, 0.05),
    "int8": Budget(1.0, 0.9, 0.05),
    "fp8": Budget(1.0, 0.9, 0.05),
    "8da4w": Budget(3.0, 0.6, 0.3),
    "4w": Budget(3.0, 0.6, 0.3),
    "embedding-8w": Budget(1.0, 0.9, 0.05),
    "embedding-4w": Budget(2.0, 0.75, 0.15),
    "fp16": Budget(0.5, 0.95, 0.01),
}


def refusals(backend: str, linear: str | None, embedding: str | None) -> list[tuple[str, str]]:
    """(field under build.quantize, why) for each part `backend` cannot run; `auto` is
    checked as the backend it resolves to on the manifest's targets by the caller."""
    out: list[tuple[str, str]] = []
    if backend == "tensorrt":
        for name, value in (("linear", linear), ("embedding", embedding)):
            if value is not None:
                out.append(
                    (
                        name,
                        f"the tensorrt backend takes build.precision "
                        f"({'/'.join(TENSORRT_PRECISIONS)}), not torchao schemes; "
                        f"remove build.quantize.{name} or build for xnnpack",
                    )
                )
        return out
    if backend == "xnnpack" and linear in ("4w", "8w"):
        out.append(
            (
                "linear",
                f"weight-only {linear} linears compute wrong values on XNNPACK (ExecuTorch 1.5.1)"
                "; use 8da4w or 8da8w (8-bit dynamic activations), which XNNPACK runs",
            )
        )
    if backend == "portable" and linear is not None:
        out.append(
            (
                "linear",
                f"the portable backend cannot run quantized linears ({linear}: torchao's ops have "
                "no portable kernels); use backend xnnpack, or quantize embeddings only",
            )
        )
    return out
