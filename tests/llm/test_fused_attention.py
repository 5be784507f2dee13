"""`attention: fused`: one operator per layer reads the cache in place up to the call's last
position (ExecuTorch's `llama::custom_sdpa`; the Python runtime runs the wheel's kernel,
`trt-edge-run` its own, device_runner/cpp/runner/fused_attention.cpp).

What must hold, on the three full-attention minis (Qwen3, Llama, Qwen2) with a 160-slot cache:
the bundle has the two-input contract (llm section version 1, no window dimension); every
call's logits equal eager transformers' (a prompt in chunks, then one token per call up to
position 130); greedy generation gives eager's tokens; and the C++ runner — its own kernel —
makes the Python runner's calls and tokens, and `--serve`'s prefix reuse gives a cold run's
tokens. The refusals: a model with sliding-window layers (the Gemma-3 mini) and an explicit
TensorRT backend are manifest errors at the `attention` line.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from trt_edge_runner.bundle_format import BundleManifest
from trt_edge_runner.runner import Runner

from tests.helpers.engine_client import Engine, prefix_reuse_turns
from tests.llm.llm_folders import manifest_text
from tests.llm.test_filled_cache import CACHE, cpp_generate, eager, prompt

pytestmark = pytest.mark.slow

ARCH = [
    pytest.param(a, marks=pytest.mark.xdist_group(f"llm-{a}")) for a in ("qwen3", "llama", "qwen2")
]
ATOL = 1e-4


@pytest.fixture(scope="session")
def fused_bundle(
    cache_bundle: Callable[[str, str], tuple[Path, Path]],
) -> Callable[[str], tuple[Path, Path]]:
    """`fused_bundle(arch)`: (bundle, the mini's folder), built once per session."""
    return lambda arch: cache_bundle(arch, "fused")


def call(runner: Runner, phase: str, ids: list[int], start: int) -> np.ndarray:
    arrays = [np.asarray([ids], dtype=np.int64), np.arange(start, start + len(ids), dtype=np.int64)]
    return np.asarray(runner.run(phase, arrays).outputs[0])


@pytest.mark.parametrize("arch", ARCH)
def test_the_bundle_has_two_inputs_and_calls_the_fused_operator(
    arch: str, fused_bundle: Callable[[str], tuple[Path, Path]]
) -> None:
    bundle, _ = fused_bundle(arch)
    doc = BundleManifest.from_json((bundle / "bundle.json").read_bytes())
    assert [(t.name, t.shape) for t in doc.inputs] == [
        ("input_ids", (1, "seq")),
        ("cache_position", ("seq",)),
    ]
    assert doc.llm is not None and (doc.llm.version, doc.llm.window_input) == (1, None)
    assert all("window" not in p.dims for p in doc.profiles)
    # The operator is in the program (outside the delegates), once per layer.
    assert (bundle / "model.pte").read_bytes().count(b"llama::custom_sdpa") == 1  # one op entry


@pytest.mark.parametrize("arch", ARCH)
def test_logits_equal_eager_call_by_call(
    arch: str, fused_bundle: Callable[[str], tuple[Path, Path]]
) -> None:
    from trt_edge.llm.reference import eager_chain

    bundle, folder = fused_bundle(arch)
    runner = Runner.open(bundle)
    ids = prompt(131, seed=7)
    chunks = [(0, 24), (24, 48), (48, 62)] + [(p, p + 1) for p in range(62, 131)]
    got = [
        call(runner, "prefill" if end - start > 1 else "decode", ids[start:end], start)
        for start, end in chunks
    ]
    want = eager_chain(eager(folder), [ids[s:e] for s, e in chunks])
    worst = max(float(np.abs(g - w).max()) for g, w in zip(got, want, strict=True))
    assert worst < ATOL, f"logits differ from eager transformers by {worst}"


@pytest.mark.parametrize("arch", ARCH)
def test_cpp_generate_equals_python_and_eager(
    arch: str, fused_bundle: Callable[[str], tuple[Path, Path]], trt_edge_run: Path
) -> None:
    from trt_edge.llm.generation import greedy_generate
    from trt_edge.llm.reference import eager_generate

    bundle, folder = fused_bundle(arch)
    ids = prompt(50, seed=5)  # prefill chunks 24 + 24 + 2, then positions 50..138
    doc = cpp_generate(trt_edge_run, bundle, ids, 90)
    ours = greedy_generate(Runner.open(bundle), ids, 90)
    theirs = eager_generate(eager(folder), ids, 90)
    assert [(s["phase"], s["start"], s["seq"]) for s in doc["steps"]] == [
        (s.phase, s.start, s.seq) for s in ours.steps
    ]
    assert doc["tokens"] == ours.tokens == theirs.tokens


@pytest.mark.xdist_group("llm-qwen3")
def test_cpp_serve_prefix_reuse_equals_a_cold_run(
    fused_bundle: Callable[[str], tuple[Path, Path]], trt_edge_run: Path
) -> None:
    """The kept prefix is read in place by the kernel: a follow-up that reuses 60 slots and a
    branch that reuses 40 (slots past them hold the previous turn's) make cold runs' tokens."""
    bundle, _ = fused_bundle("qwen3")
    ids = prompt(41, seed=9)
    with Engine(trt_edge_run, bundle) as engine:
        turns = prefix_reuse_turns(engine, ids, prompt(20, seed=10), prompt(30, seed=12))
    assert turns.reused == (len(ids) + 20 - 1, 40)
    assert turns.warm == turns.cold


def validate(manifest: Path) -> subprocess.CompletedProcess[str]:
    import sys

    argv = [sys.executable, "-m", "trt_edge", "validate", str(manifest)]
    return subprocess.run(argv, capture_output=True, text=True, check=False, timeout=120)


def refusal(text: str, tmp_path: Path) -> tuple[int, str, str]:
    """Validate `text` as a manifest: (exit code, output, the `file:line:` of its attention)."""
    manifest = tmp_path / "manifest.yaml"
    manifest.write_text(text, encoding="utf-8")
    done = validate(manifest)
    line = next(i for i, row in enumerate(text.splitlines(), 1) if "attention: fused" in row)
    return done.returncode, done.stdout + done.stderr, f"{manifest}:{line}:"


@pytest.mark.xdist_group("llm-gemma3")
def test_sliding_window_layers_are_refused_at_the_attention_line(
    mini_project: Callable[[str], Path], tmp_path: Path
) -> None:
    folder = mini_project("gemma3").parent / "folder"
    text = manifest_text("gemma3", max_cache_len=CACHE).replace(
        f"{{path: ./folder, max_cache_len: {CACHE}}}",
        f"{{path: {folder},\n               max_cache_len: {CACHE}, attention: fused}}",
    )
    code, out, place = refusal(text, tmp_path)
    assert code == 1, out
    assert place in out
    assert "it has sliding-window attention layers; use attention: filled" in out
    assert "Traceback" not in out


@pytest.mark.xdist_group("llm-qwen3")
def test_a_tensorrt_backend_is_refused_at_the_attention_line(
    mini_project: Callable[[str], Path], tmp_path: Path
) -> None:
    folder = mini_project("qwen3").parent / "folder"
    text = (
        manifest_text("qwen3", max_cache_len=CACHE)
        .replace(
            f"{{path: ./folder, max_cache_len: {CACHE}}}",
            f"{{path: {folder}, max_cache_len: {CACHE}, attention: fused}}",
        )
        .replace("backend: xnnpack", "backend: tensorrt")
        .replace("targets: [cpu-x86_64]", "targets: [x86-ampere]")
    )
    code, out, place = refusal(text, tmp_path)
    assert code == 1, out
    assert place in out
    assert "attention fused runs on ExecuTorch's CPU backends (xnnpack, portable), not " in out


@pytest.mark.xdist_group("llm-qwen3")
def test_the_install_smoke_run_of_a_fused_bundle_passes(
    fused_bundle: Callable[[str], tuple[Path, Path]], trt_edge_run: Path
) -> None:
    """What install and health run (`trt-edge-run phases`, made-up inputs at each phase's opt
    shape): the fused kernel needs start + seq <= slots, so made-up positions must be a real
    call's (0..seq-1), not random slots — random ones failed every install of such a bundle.
    """
    bundle, _ = fused_bundle("qwen3")
    done = subprocess.run(
        [str(trt_edge_run), "phases", "--bundle", str(bundle), "--runs", "2", "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    phases = json.loads(done.stdout)["phases"]
    assert {p["phase"] for p in phases} == {"decode", "prefill"}
    assert all(p["outcome"] == "ok" for p in phases)
