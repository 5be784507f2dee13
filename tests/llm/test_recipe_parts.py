"""The recipe's pieces alone: each re-expression equals what it replaces, the masks say who
sees whom, the cache writes where it is told, and prompts split into calls the profiles take."""

from __future__ import annotations

from typing import Any

import pytest
from trt_edge.llm.generation import prefill_chunks


@pytest.mark.parametrize(
    ("length", "low", "high", "chunks"),
    [
        (1, 2, 24, [1]),  # below the prefill profile: a decode-sized call
        (24, 2, 24, [24]),
        (30, 2, 24, [24, 6]),
        (25, 2, 24, [23, 2]),  # a remainder of 1 borrows from the full chunk
        (49, 2, 24, [24, 23, 2]),
        (5, 8, 24, [1, 1, 1, 1, 1]),  # too short for prefill at all
        (9, 8, 8, [8, 1]),  # cannot borrow (8 - 7 < 8): the rest goes one token at a time
        (3, 1, 1, [1, 1, 1]),
        (0, 2, 24, []),
    ],
)
def test_prompts_split_into_calls_the_profiles_accept(
    length: int, low: int, high: int, chunks: list[int]
) -> None:
    assert prefill_chunks(length, low, high) == chunks
    assert sum(chunks) == length


def test_rotate_half_as_a_matmul_is_exact() -> None:
    import torch
    from transformers.models.llama import modeling_llama
    from trt_edge.llm.rewrites import rotation_matrix

    x = torch.randn(1, 4, 7, 16)
    assert torch.equal(x @ rotation_matrix(16), modeling_llama.rotate_half(x))  # type: ignore[no-untyped-call]


def test_written_out_tanh_gelu_is_the_tanh_approximation() -> None:
    import torch
    from trt_edge.llm.rewrites import TanhGelu

    x = torch.linspace(-6, 6, 4097)
    ours = TanhGelu()(x)
    assert torch.allclose(ours, torch.nn.functional.gelu(x, approximate="tanh"), atol=1e-6)
    # ...and not the erf form XNNPACK lowers aten.gelu to (what the rewrite avoids).
    assert (ours - torch.nn.functional.gelu(x)).abs().max() > 1e-4


@pytest.mark.parametrize(("heads", "kv_heads"), [(4, 1), (4, 2), (4, 4)])
def test_bmm_attention_equals_transformers_eager_attention(heads: int, kv_heads: int) -> None:
    import torch
    from transformers.models.llama.modeling_llama import eager_attention_forward
    from trt_edge.llm.attention import bmm_attention

    torch.manual_seed(0)
    seq, cache, dim = 3, 10, 8
    query = torch.randn(1, heads, seq, dim)
    key, value = torch.randn(1, kv_heads, cache, dim), torch.randn(1, kv_heads, cache, dim)
    mask = torch.zeros(1, 1, seq, cache)
    mask[..., 6:] = torch.finfo(torch.float32).min  # slots not written yet
    module = torch.nn.Module()
    module.num_key_value_groups = heads // kv_heads  # type: ignore[assignment]
    module.training = False
    want, _ = eager_attention_forward(module, query, key, value, mask, scaling=dim**-0.5)
    got, _ = bmm_attention(module, query, key, value, mask, scaling=dim**-0.5)
    assert got.shape == want.shape == (1, seq, heads, dim)
    assert torch.allclose(got, want, atol=1e-6)


def _wrapper(layer_types: list[str], window: int, cache_len: int) -> object:
    import torch
    from transformers import Gemma3ForCausalLM, Gemma3TextConfig
    from trt_edge.llm.static_cache import StaticCacheLM

    config = Gemma3TextConfig(
        vocab_size=32,
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=len(layer_types),
        num_attention_heads=2,
        num_key_value_heads=1,
        head_dim=8,
        sliding_window=window,
        layer_types=layer_types,
    )
    torch.manual_seed(0)
    model: Any = Gemma3ForCausalLM(config)
    return StaticCacheLM(model.eval(), cache_len)


def test_masks_hide_the_future_and_what_slid_out_of_the_window() -> None:
    import torch

    wrapper = _wrapper(["sliding_attention", "full_attention"], window=3, cache_len=8)
    masks = wrapper.masks(torch.tensor([4, 5]), torch.float32)  # type: ignore[attr-defined]
    assert isinstance(masks, dict)
    full = masks["full_attention"][0, 0] == 0
    sliding = masks["sliding_attention"][0, 0] == 0
    assert full.tolist() == [[s <= q for s in range(8)] for q in (4, 5)]
    assert sliding.tolist() == [[q - 3 < s <= q for s in range(8)] for q in (4, 5)]


def test_the_cache_is_written_at_the_given_positions_only() -> None:
    import torch
    from trt_edge.llm.static_cache import BufferCache

    keys, values = [torch.zeros(1, 1, 6, 2)], [torch.zeros(1, 1, 6, 2)]
    cache = BufferCache(keys, values, torch.tensor([2, 3]))
    new = torch.ones(1, 1, 2, 2)
    k, v = cache.update(new, 2 * new, 0)
    assert k is keys[0] and v is values[0]  # the buffers themselves, whole
    assert keys[0][0, 0, :, 0].tolist() == [0, 0, 1, 1, 0, 0]
    assert values[0][0, 0, :, 0].tolist() == [0, 0, 2, 2, 0, 0]


def test_unsupported_layer_types_are_refused() -> None:
    from trt_edge.llm.static_cache import StaticCacheLM

    model = _wrapper(["full_attention"], 3, 8).model  # type: ignore[attr-defined]
    model.config.layer_types = ["chunked_attention"]
    with pytest.raises(ValueError, match="chunked_attention"):
        StaticCacheLM(model, 8)
