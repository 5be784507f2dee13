"""Gemma-3, Llama, Qwen2 and Qwen3 minis through the real pipeline: the KV cache stays inside
the program, the bundle carries the recipe's contract, and what it computes is what
transformers computes — checked here against references the build's validation does not
use (a full-sequence forward without a cache, `model.generate` called directly)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from trt_edge_runner.bundle_format import BundleManifest
from trt_edge_runner.runner import Runner

from tests.llm.llm_folders import (
    ARCHITECTURES,
    MAX_CACHE_LEN,
    SLIDING_WINDOW,
)

pytestmark = pytest.mark.slow

ARCH = [pytest.param(a, marks=pytest.mark.xdist_group(f"llm-{a}")) for a in ARCHITECTURES]
ATOL = 1e-3  # the manifests' default parity tolerance
CLASSES = {
    "gemma3": "Gemma3ForCausalLM",
    "llama": "LlamaForCausalLM",
    "qwen2": "Qwen2ForCausalLM",
    "qwen3": "Qwen3ForCausalLM",
}


def eager(folder: Path) -> Any:
    import torch
    from transformers import AutoModelForCausalLM

    model: Any = AutoModelForCausalLM.from_pretrained(
        folder, dtype=torch.float32, local_files_only=True
    )
    return model.eval()


def run(runner: Runner, phase: str, ids: list[int], start: int) -> np.ndarray:
    from trt_edge.llm.generation import method_inputs

    section = runner.manifest.llm
    assert section is not None
    names = [spec.name for spec in runner.manifest.inputs]
    result = runner.run(phase, method_inputs(section, names, ids, start))
    return np.asarray(result.outputs[0])


def prompt(length: int, vocab: int, seed: int) -> list[int]:
    return [int(t) for t in np.random.default_rng(seed).integers(4, vocab, size=length)]


@pytest.mark.parametrize("arch", ARCH)
def test_bundle_carries_the_recipe_contract(arch: str, mini_bundle: Callable[[str], Path]) -> None:
    bundle = mini_bundle(arch)
    doc = BundleManifest.from_json((bundle / "bundle.json").read_bytes())
    assert [(t.name, t.shape, t.values) for t in doc.inputs] == [
        ("input_ids", (1, "seq"), (0, 512)),
        ("cache_position", ("seq",), (0, MAX_CACHE_LEN)),
        ("cache_window", ("window",), (0, MAX_CACHE_LEN)),  # `attention: filled`, the default
    ]
    assert [o.shape for o in doc.outputs] == [(1, 512)]  # last position only
    llm = doc.llm
    assert llm is not None
    assert (llm.architecture, llm.max_cache_len, llm.vocab_size) == (
        CLASSES[arch],
        MAX_CACHE_LEN,
        512,
    )
    assert (llm.tokens_input, llm.positions_input, llm.logits_output) == (
        "input_ids",
        "cache_position",
        "output_0",
    )
    assert (llm.version, llm.window_input, llm.window_bucket) == (2, "cache_window", 64)
    assert (llm.eos_token_ids, llm.bos_token_id, llm.pad_token_id) == ((1,), 2, 0)
    assert llm.requires_zeroed_planned_memory
    assert llm.cache_buffers == ("k_cache_0", "v_cache_0", "k_cache_1", "v_cache_1")
    # The tokenizer is a listed file like any other: its hash is in bundle.json.
    assert llm.tokenizer == "tokenizer.json"
    data = (bundle / "tokenizer.json").read_bytes()
    assert doc.files["tokenizer.json"].sha256 == hashlib.sha256(data).hexdigest()
    # The re-expressions keep XNNPACK's partitions whole: a handful, not one per op. With
    # `attention: filled` each layer's cache window (a slice_copy of a dynamic length, which
    # XNNPACK does not take) splits it once more: at most 3 per layer (2 layers: 7 or 8).
    backends = [d.backend_id for d in doc.delegates]
    layers = len(llm.cache_buffers) // 2
    assert backends and set(backends) == {"XnnpackBackend"} and len(backends) <= 2 + 3 * layers
    assert doc.provenance["packages"]["transformers"]
    assert list(doc.provenance["requirements"].values()) == [
        doc.provenance["packages"]["transformers"]
    ]


@pytest.mark.parametrize("arch", ARCH)
def test_validation_report_ran_every_check_and_passed(
    arch: str, mini_bundle: Callable[[str], Path]
) -> None:
    report = json.loads((mini_bundle(arch) / "reports" / "validation.json").read_bytes())
    assert report["ok"] and not report["failures"]
    points = {(p["profile"], p["symbols"]["seq"]) for p in report["parity"]}
    assert points == {(0, 1), (1, 2), (1, 8), (1, 24)}
    for entry in report["parity"]:
        # A prefill then three decode steps, each within tolerance of transformers.
        assert [c["seq"] for c in entry["calls"]] == [entry["symbols"]["seq"], 1, 1, 1]
        assert all(c["max_abs"] < ATOL for c in entry["calls"])
    assert all(check["ok"] for check in report["state"])
    overwrite = next(s for s in report["state"] if "overwritten" in s["check"])
    assert overwrite["changed_next_position"] is True
    assert report["generation"]["ok"]
    assert report["tokenizer"]["ok"] and report["tokenizer"]["samples"]
    assert all(b["rejected"] for b in report["cache_bounds"])
    assert all(o["rejected"] for o in report["outside"])


@pytest.mark.parametrize("arch", ARCH)
def test_prefill_then_decode_equals_a_full_forward_of_transformers(
    arch: str, mini_bundle: Callable[[str], Path], mini_project: Callable[[str], Path]
) -> None:
    """Longer than Gemma's sliding window; eager runs the whole sequence at once, no cache."""
    import torch

    model = eager(mini_project(arch).parent / "folder")
    runner = Runner.open(mini_bundle(arch))
    first = prompt(20, 512, seed=1)
    assert len(first) > SLIDING_WINDOW
    follow = prompt(4, 512, seed=2)
    got = [run(runner, "prefill", first, 0)]
    for i, token in enumerate(follow):
        got.append(run(runner, "decode", [token], len(first) + i))
    with torch.no_grad():
        full = model(input_ids=torch.tensor([first + follow]), use_cache=False).logits[0].numpy()
    want = [full[len(first) - 1 + i] for i in range(len(follow) + 1)]
    for step, (g, w) in enumerate(zip(got, want, strict=True)):
        assert np.abs(g[0] - w).max() < ATOL, step


@pytest.mark.parametrize("arch", ARCH)
def test_greedy_tokens_equal_transformers_generate(
    arch: str, mini_bundle: Callable[[str], Path], mini_project: Callable[[str], Path]
) -> None:
    import torch
    from trt_edge.llm.generation import greedy_generate

    model = eager(mini_project(arch).parent / "folder")
    ids = prompt(11, 512, seed=3)  # 11 > the sliding window of the Gemma mini
    result = greedy_generate(Runner.open(mini_bundle(arch)), ids, 12)
    with torch.no_grad():
        out = model.generate(
            torch.tensor([ids]),
            attention_mask=torch.ones(1, len(ids), dtype=torch.int64),
            max_new_tokens=12,
            do_sample=False,
        )
    assert result.tokens == out[0, len(ids) :].tolist()
    assert len(set(result.tokens)) > 2  # varied tokens: the comparison says something
    phases = [step.phase for step in result.steps]
    assert phases[0] == "prefill" and set(phases[1:]) <= {"decode"}


@pytest.mark.parametrize("arch", ARCH)
def test_the_cache_persists_between_calls_and_a_fresh_load_starts_clean(
    arch: str, mini_bundle: Callable[[str], Path]
) -> None:
    bundle = mini_bundle(arch)
    runner = Runner.open(bundle)
    ids = prompt(6, 512, seed=4)
    run(runner, "prefill", ids, 0)
    after_a = run(runner, "decode", [7], 6)
    after_b = run(runner, "decode", [9], 7)  # sees token 7 at position 6
    run(runner, "decode", [8], 6)  # position 6 rewritten in place
    after_b2 = run(runner, "decode", [9], 7)  # now sees token 8
    assert np.abs(after_b2 - after_b).max() > ATOL
    # Restarting at 0 on the used method equals a freshly loaded one: nothing leaks.
    again = run(runner, "prefill", ids, 0)
    fresh = Runner.open(bundle)
    clean = run(fresh, "prefill", ids, 0)
    assert np.isfinite(clean).all()
    assert np.abs(again - clean).max() < 1e-5
    assert np.abs(run(fresh, "decode", [7], 6) - after_a).max() < 1e-5
