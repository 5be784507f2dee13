"""`attention: filled`: the Qwen3 and Gemma-3 minis (Gemma's first layer slides over 8 slots)
built through the real pipeline with a 160-slot cache, whose windows are 64, 128 and 160.

What must hold: the bundle carries the window contract (a third input, a `window` profile
dimension, llm section version 2); every call's logits equal eager transformers' across
the bucket boundaries (a prompt in chunks, then decode steps at positions 63/64 and
127/128); greedy generation crossing both boundaries gives `generate`'s tokens; a window
shorter than the positions a call writes is refused before executing; and a window wider
than needed (any bucket) gives the same logits, because the causal mask hides the slots
past the query. The C++ runner (`trt-edge-run`) feeds the same windows: `--generate` (a
prompt in prefill chunks, then decode across both boundaries) makes the Python runner's calls
and tokens and eager transformers' tokens; `--serve`'s prefix reuse across a boundary gives a
cold run's tokens; a `--phase` call with a short window is refused with the Python message.
The opt-out (`attention: all`, Qwen3) builds the two-input, version-1 bundle, and both runners
make the default bundle's tokens with it.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from trt_edge_runner.bundle_format import BundleManifest
from trt_edge_runner.errors import InputValueError
from trt_edge_runner.runner import Runner
from trt_edge_runner.runner_interface import EXIT_REQUEST_REFUSED

from tests.helpers.engine_client import Engine, prefix_reuse_turns
from tests.llm.conftest import CACHE_SLOTS

pytestmark = pytest.mark.slow

ARCH = [pytest.param(a, marks=pytest.mark.xdist_group(f"llm-{a}")) for a in ("qwen3", "gemma3")]
CACHE = CACHE_SLOTS  # windows: 64, 128, 160 (the cap)
ATOL = 1e-4


@pytest.fixture(scope="session")
def filled_bundle(
    cache_bundle: Callable[[str, str], tuple[Path, Path]],
) -> Callable[[str], tuple[Path, Path]]:
    """`filled_bundle(arch)`: (bundle, the mini's folder), built once per session."""
    return lambda arch: cache_bundle(arch, "filled")


def eager(folder: Path) -> Any:
    from trt_edge.library_noise import quiet_library_noise

    with quiet_library_noise():
        import torch
        from transformers import AutoModelForCausalLM

        model: Any = AutoModelForCausalLM.from_pretrained(
            folder, dtype=torch.float32, local_files_only=True
        )
    return model.eval()


def call(runner: Runner, phase: str, ids: list[int], start: int, window: int) -> np.ndarray:
    arrays = [
        np.asarray([ids], dtype=np.int64),
        np.arange(start, start + len(ids), dtype=np.int64),
        np.arange(window, dtype=np.int64),
    ]
    return np.asarray(runner.run(phase, arrays).outputs[0])


def prompt(length: int, seed: int) -> list[int]:
    return [int(t) for t in np.random.default_rng(seed).integers(4, 512, size=length)]


@pytest.mark.parametrize("arch", ARCH)
def test_the_bundle_carries_the_window_contract(
    arch: str, filled_bundle: Callable[[str], tuple[Path, Path]]
) -> None:
    bundle, _ = filled_bundle(arch)
    doc = BundleManifest.from_json((bundle / "bundle.json").read_bytes())
    assert [(t.name, t.shape) for t in doc.inputs] == [
        ("input_ids", (1, "seq")),
        ("cache_position", ("seq",)),
        ("cache_window", ("window",)),
    ]
    assert all((p.dims["window"].min, p.dims["window"].max) == (1, CACHE) for p in doc.profiles)
    llm = doc.llm
    assert llm is not None
    assert (llm.version, llm.window_input, llm.window_bucket) == (2, "cache_window", 64)
    assert [llm.window_length(end) for end in (1, 64, 65, 128, 129, 160)] == [
        64,
        64,
        128,
        128,
        160,
        160,
    ]


@pytest.mark.parametrize("arch", ARCH)
def test_logits_equal_eager_across_window_buckets(
    arch: str, filled_bundle: Callable[[str], tuple[Path, Path]]
) -> None:
    from trt_edge.llm.reference import eager_chain

    bundle, folder = filled_bundle(arch)
    runner = Runner.open(bundle)
    llm = runner.manifest.llm
    assert llm is not None
    ids = prompt(131, seed=7)
    # Prefill chunks ending at 24, 48, 62; then one token per call from 62 to 130: the
    # window grows 64 -> 128 (at position 64) -> 160 (at position 128).
    chunks = [(0, 24), (24, 48), (48, 62)] + [(p, p + 1) for p in range(62, 131)]
    got, windows = [], []
    for start, end in chunks:
        phase = "prefill" if end - start > 1 else "decode"
        windows.append(llm.window_length(end))
        got.append(call(runner, phase, ids[start:end], start, windows[-1]))
    want = eager_chain(eager(folder), [ids[s:e] for s, e in chunks])
    assert sorted(set(windows)) == [64, 128, 160]
    worst = max(float(np.abs(g - w).max()) for g, w in zip(got, want, strict=True))
    assert worst < ATOL, f"logits differ from eager transformers by {worst}"


@pytest.mark.parametrize("arch", ARCH)
def test_any_wider_window_gives_the_same_logits(
    arch: str, filled_bundle: Callable[[str], tuple[Path, Path]]
) -> None:
    bundle, _ = filled_bundle(arch)
    runner = Runner.open(bundle)
    ids = prompt(21, seed=11)
    call(runner, "prefill", ids[:20], 0, 20)  # the tightest window: exactly the slots written
    rows = [call(runner, "decode", ids[20:], 20, window) for window in (21, 64, 100, CACHE)]
    for row in rows[1:]:
        np.testing.assert_allclose(row, rows[0], atol=1e-5, rtol=0)


@pytest.mark.parametrize("arch", ARCH)
def test_greedy_generation_across_buckets_equals_generate(
    arch: str, filled_bundle: Callable[[str], tuple[Path, Path]]
) -> None:
    from trt_edge.llm.generation import greedy_generate
    from trt_edge.llm.reference import eager_generate

    bundle, folder = filled_bundle(arch)
    runner = Runner.open(bundle)
    ids = prompt(50, seed=3)
    ours = greedy_generate(runner, ids, 90)  # positions up to 138: windows 64, 128, 160
    theirs = eager_generate(eager(folder), ids, 90)
    assert ours.tokens == theirs.tokens[: len(ours.tokens)]
    assert len(ours.tokens) == len(theirs.tokens)


@pytest.mark.parametrize("arch", ARCH)
def test_a_window_shorter_than_the_positions_written_is_refused(
    arch: str, filled_bundle: Callable[[str], tuple[Path, Path]]
) -> None:
    bundle, _ = filled_bundle(arch)
    runner = Runner.open(bundle)
    with pytest.raises(InputValueError, match="input 'cache_window' has length 10, but the call"):
        call(runner, "prefill", prompt(4, seed=1), 8, 10)


def cpp_generate(binary: Path, bundle: Path, ids: list[int], new_tokens: int) -> Any:
    argv = [str(binary), "--bundle", str(bundle), "--generate", "--json"]
    argv += ["--max-new-tokens", str(new_tokens), "--prompt-ids", ",".join(map(str, ids))]
    done = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=600)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.parametrize("arch", ARCH)
def test_cpp_generate_equals_python_and_eager_across_buckets(
    arch: str, filled_bundle: Callable[[str], tuple[Path, Path]], trt_edge_run: Path
) -> None:
    from trt_edge.llm.generation import greedy_generate
    from trt_edge.llm.reference import eager_generate

    bundle, folder = filled_bundle(arch)
    ids = prompt(50, seed=5)  # prefill chunks 24 + 24 + 2, then positions 50..138
    doc = cpp_generate(trt_edge_run, bundle, ids, 90)
    ours = greedy_generate(Runner.open(bundle), ids, 90)
    theirs = eager_generate(eager(folder), ids, 90)
    cpp_calls = [(s["phase"], s["start"], s["seq"]) for s in doc["steps"]]
    assert cpp_calls == [(s.phase, s.start, s.seq) for s in ours.steps]
    assert cpp_calls[:3] == [("prefill", 0, 24), ("prefill", 24, 24), ("prefill", 48, 2)]
    assert cpp_calls[-1][1] >= 128  # the last window is the cap, 160
    assert doc["tokens"] == ours.tokens == theirs.tokens


@pytest.mark.parametrize("arch", ARCH)
def test_cpp_serve_prefix_reuse_across_a_bucket_equals_a_cold_run(
    arch: str, filled_bundle: Callable[[str], tuple[Path, Path]], trt_edge_run: Path
) -> None:
    """Turn 1 fills 60 slots (window 64); the follow-up reuses them and runs to 100 (window
    128); a branch leaving after 40 tokens reuses 40 while slots past them hold turn 2's."""
    from trt_edge.llm.generation import greedy_generate

    bundle, _ = filled_bundle(arch)
    ids = prompt(41, seed=9)
    with Engine(trt_edge_run, bundle) as engine:
        assert engine.event()["generation"]["max_cache_len"] == CACHE
        turns = prefix_reuse_turns(engine, ids, prompt(20, seed=10), prompt(30, seed=12))
    assert turns.reused == (len(ids) + 20 - 1, 40)
    assert turns.warm == turns.cold
    runner = Runner.open(bundle)
    assert turns.warm[0] == greedy_generate(runner, turns.follow, 20).tokens


@pytest.mark.parametrize("arch", ARCH[:1])
def test_cpp_refuses_a_window_shorter_than_the_positions_written(
    arch: str, filled_bundle: Callable[[str], tuple[Path, Path]], trt_edge_run: Path, tmp_path: Path
) -> None:
    bundle, _ = filled_bundle(arch)
    np.save(tmp_path / "input_ids.npy", np.asarray([prompt(4, seed=1)], np.int64))
    np.save(tmp_path / "cache_position.npy", np.arange(8, 12, dtype=np.int64))
    for window, code in ((12, 0), (11, EXIT_REQUEST_REFUSED)):
        np.save(tmp_path / "cache_window.npy", np.arange(window, dtype=np.int64))
        argv = [str(trt_edge_run), "--bundle", str(bundle), "--phase", "prefill"]
        done = subprocess.run(
            [*argv, "--inputs", str(tmp_path)], capture_output=True, text=True, check=False
        )
        assert done.returncode == code, done.stderr
    assert (
        "input 'cache_window' has length 11, but the call writes position 11: the attended "
        "window must cover positions [0, 12)"
    ) in done.stderr


@pytest.mark.xdist_group("llm-qwen3")
def test_attention_all_opts_out_and_makes_the_same_tokens(
    cache_bundle: Callable[[str, str], tuple[Path, Path]], trt_edge_run: Path
) -> None:
    """The opt-out: two inputs, llm section version 1, no window dimension; both runners make
    the tokens the default (`filled`) bundle of the same weights makes."""
    from trt_edge.llm.generation import greedy_generate

    every, _ = cache_bundle("qwen3", "all")
    filled, _ = cache_bundle("qwen3", "filled")
    doc = BundleManifest.from_json((every / "bundle.json").read_bytes())
    assert [t.name for t in doc.inputs] == ["input_ids", "cache_position"]
    assert doc.llm is not None and (doc.llm.version, doc.llm.window_input) == (1, None)
    assert all("window" not in p.dims for p in doc.profiles)
    ids = prompt(50, seed=5)
    want = greedy_generate(Runner.open(filled), ids, 90).tokens
    assert greedy_generate(Runner.open(every), ids, 90).tokens == want
    assert cpp_generate(trt_edge_run, every, ids, 90)["tokens"] == want
