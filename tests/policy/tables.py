"""Profile tables shared by the policy tests (plain values, built from the real types)."""

from __future__ import annotations

from trt_edge_runner.bundle_format import (
    BundleManifest,
    DimRange,
    PhaseTarget,
    Profile,
    RuntimePolicy,
    TensorSpec,
)
from trt_edge_runner.policy import ProfileBounds, ProfileTable


def bounds(lo: tuple[int, ...], hi: tuple[int, ...]) -> ProfileBounds:
    return ProfileBounds(lo, hi)


def decode_prefill(active: int = 0) -> ProfileTable:
    """One [1, seq] input: profile 0 decodes one token, profile 1 prefills (overlap at 1)."""
    return ProfileTable(
        ((bounds((1, 1), (1, 1)),), (bounds((1, 1), (1, 2048)),)),
        active,
    )


def two_inputs_three_profiles(active: int = 0) -> ProfileTable:
    """The benchmark's table: input_ids [1, seq] and hidden [1, seq, 16], three profiles."""
    return ProfileTable(
        (
            (bounds((1, 1), (1, 1)), bounds((1, 1, 16), (1, 1, 16))),
            (bounds((1, 1), (1, 512)), bounds((1, 1, 16), (1, 512, 16))),
            (bounds((1, 512), (1, 2048)), bounds((1, 512, 16), (1, 2048, 16))),
        ),
        active,
    )


def llm_manifest(phases: dict[str, PhaseTarget] | None = None) -> BundleManifest:
    """A bundle manifest like the tiny LLM's: decode [1, 1], prefill [1, 32..2048]."""
    return BundleManifest(
        schema_version=1,
        name="tiny-llm",
        version="0.1.0",
        backend="xnnpack",
        target={"id": "cpu-x86_64"},
        method="forward",
        inputs=(
            TensorSpec("input_ids", "int64", (1, "seq"), values=(0, 256)),
            TensorSpec("positions", "int64", (1, "seq")),
        ),
        outputs=(TensorSpec("logits", "float32", (1, "seq", 256)),),
        profiles=(
            Profile("decode", {"seq": DimRange(1, 1, 1)}),
            Profile("prefill", {"seq": DimRange(32, 128, 2048)}),
        ),
        runtime=RuntimePolicy(
            policy="auto" if phases and "auto" in phases.values() else "pinned",
            phases=dict(phases) if phases is not None else {"decode": 0, "prefill": 1},
        ),
        files={},
    )
