"""`runtime.slots`: one program holds several conversations' KV caches and advances a batch
of them in one call (issue 29, part 1).

The contract every runner builds on (bundle.json llm version 3): row b of a call reads and
writes slot `cache_slot[b]` at positions `cache_position[b]`, and its logits are the ones the
same call gives alone. Checked here on the real `.pte` through ExecuTorch's runtime: four
conversations prefilled one by one into slots 0..3, then decoded together, against each run
alone in slot 0 of a fresh program — greedy tokens equal and logits bit-equal (rows never mix:
attention is `B * KV` independent matrices; the linear layers' XNNPACK GEMM computes each row
on its own), fp32 and with 8da4w linear layers (group 32: torchao quantizes activations per
token, XNNPACK's dynamically quantized GEMM per row). The quantized slots program is also
bit-equal to the same folder's quantized program without slots, and within a stated distance
of eager torchao-quantized transformers with the same greedy tokens.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from trt_edge_runner.errors import TrtEdgeError
from trt_edge_runner.runner import Runner

from tests.helpers.session_builds import build_once
from tests.llm.conftest import build_bundle
from tests.llm.llm_folders import (
    ARCHITECTURES,
    LINEAR_8DA4W,
    PREFILL_MAX,
    QUANTIZED_BUDGET,
    SLOTS,
)

PROMPTS = ([5, 17, 99, 3, 250], [7] * 9, list(range(40, 53)), [300, 301, 302])
STEPS = 6
# Largest |logit| difference between the quantized program and eager torchao-quantized
# transformers: XNNPACK's int8 GEMM and torchao's reference dequantize-then-matmul round
# differently (measured on the Qwen3 mini: at most 0.11, its fp32 logits span about +-4).
EAGER_QUANTIZED_ATOL = 0.25


def _runner(bundle: Path) -> Runner:
    return Runner.open(bundle)


def _call(
    runner: Runner, phase: str, rows: list[list[int]], starts: list[int], slots: list[int]
) -> np.ndarray:
    ids = np.asarray(rows, dtype=np.int64)
    positions = np.asarray([range(s, s + len(r)) for s, r in zip(starts, rows, strict=True)])
    run = runner.run(phase, [ids, positions.astype(np.int64), np.asarray(slots, dtype=np.int64)])
    logits: np.ndarray = np.asarray(run.outputs[0])
    return logits


def _prefill(runner: Runner, prompt: list[int], slot: int) -> np.ndarray:
    assert 2 <= len(prompt) <= PREFILL_MAX
    logits: np.ndarray = _call(runner, "prefill", [prompt], [0], [slot])[0]
    return logits


def _alone(bundle: Path, prompt: list[int]) -> tuple[list[int], list[np.ndarray]]:
    """Greedy tokens and each step's logits of `prompt` alone in slot 0 of a fresh program."""
    runner = _runner(bundle)
    logits = _prefill(runner, prompt, 0)
    tokens, steps = [], [logits]
    for step in range(STEPS):
        tokens.append(int(logits.argmax()))
        logits = _call(runner, "decode", [[tokens[-1]]], [len(prompt) + step], [0])[0]
        steps.append(logits)
    return tokens, steps


def _together(bundle: Path) -> tuple[list[list[int]], list[list[np.ndarray]]]:
    """The four prompts in slots 0..3 of one program, decoded in batches of all four."""
    runner = _runner(bundle)
    last = [_prefill(runner, prompt, slot) for slot, prompt in enumerate(PROMPTS)]
    tokens: list[list[int]] = [[] for _ in PROMPTS]
    steps: list[list[np.ndarray]] = [[logits] for logits in last]
    for step in range(STEPS):
        for row, logits in enumerate(last):
            tokens[row].append(int(logits.argmax()))
        starts = [len(prompt) + step for prompt in PROMPTS]
        batch = _call(runner, "decode", [[t[-1]] for t in tokens], starts, list(range(SLOTS)))
        last = list(batch)
        for row, logits in enumerate(last):
            steps[row].append(logits)
    return tokens, steps


def _assert_rows_equal_alone(bundle: Path) -> None:
    together, together_logits = _together(bundle)
    for row, prompt in enumerate(PROMPTS):
        alone, alone_logits = _alone(bundle, prompt)
        assert together[row] == alone, f"row {row}: batched tokens differ from alone"
        for step, (a, b) in enumerate(zip(together_logits[row], alone_logits, strict=True)):
            assert np.array_equal(a, b), f"row {row} step {step}: max diff {np.abs(a - b).max()}"


@pytest.mark.parametrize("quantize", [None, LINEAR_8DA4W], ids=["fp32", "8da4w"])
@pytest.mark.parametrize("arch", ARCHITECTURES)
def test_rows_of_a_batch_equal_each_conversation_alone(
    arch: str, quantize: str | None, slots_bundle: Callable[..., Path]
) -> None:
    _assert_rows_equal_alone(slots_bundle(arch, quantize))


def _single_program_chain(bundle: Path, chunks: list[list[int]]) -> list[np.ndarray]:
    """Each call's logits `[vocab]` of `chunks` (a prompt, then one token per call) run by a
    bundle without slots (`attention: filled`: the inputs `method_inputs` makes)."""
    from trt_edge.llm.generation import method_inputs

    runner = _runner(bundle)
    section = runner.manifest.llm
    assert section is not None
    names = [spec.name for spec in runner.manifest.inputs]
    out, start = [], 0
    for chunk in chunks:
        phase = "prefill" if len(chunk) > 1 else "decode"
        run = runner.run(phase, method_inputs(section, names, chunk, start))
        out.append(np.asarray(run.outputs[0]).reshape(-1))
        start += len(chunk)
    return out


def _eager_quantized(folder: Path) -> Any:
    """The folder's transformers model with the build's own 8da4w step applied (torchao)."""
    import torch
    from transformers import AutoModelForCausalLM
    from trt_edge.manifest.quantization import Quantization
    from trt_edge.pipeline.quantize import QuantizeStep

    model: Any = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32)
    model.eval()
    step = QuantizeStep(Quantization(linear="8da4w", embedding=None, group_size=32), "xnnpack")
    return step.apply(model)


def test_the_quantized_slots_program_is_the_quantized_program_without_slots(
    slots_bundle: Callable[..., Path], mini_project: Callable[[str], Path], llm_root: Path
) -> None:
    """What validation's budget cannot show: slots change nothing in a quantized program. The
    same conversations give bit-equal logits with and without slots, and both stay within
    EAGER_QUANTIZED_ATOL of eager torchao-quantized transformers with its greedy tokens."""
    from trt_edge.llm.reference import eager_chain

    manifest = mini_project("qwen3")

    def make(work: Path) -> Path:
        text = manifest.read_text(encoding="utf-8")
        path = manifest.with_name("manifest-8da4w-linear.yaml")
        path.write_text(f"{text}  quantize: {LINEAR_8DA4W}\n{QUANTIZED_BUDGET}", encoding="utf-8")
        return build_bundle(path, work / "out")

    single = build_once(llm_root, "qwen3-8da4w-linear-bundle", make)
    slotted = slots_bundle("qwen3", LINEAR_8DA4W)
    model = _eager_quantized(manifest.parent / "folder")
    for prompt in PROMPTS:
        tokens, logits = _alone(slotted, prompt)
        chunks = [prompt] + [[t] for t in tokens]
        without = _single_program_chain(single, chunks)
        for step, (a, b) in enumerate(zip(logits, without, strict=True)):
            assert np.array_equal(a, b), f"step {step}: max diff {np.abs(a - b).max()}"
        eager = [row[0] for row in eager_chain(model, chunks)]
        assert [int(e.argmax()) for e in eager[:-1]] == tokens
        worst = max(float(np.abs(a - e).max()) for a, e in zip(logits, eager, strict=True))
        assert worst <= EAGER_QUANTIZED_ATOL, worst


def test_the_bundle_records_its_slots_and_counts_their_caches(
    slots_bundle: Callable[..., Path], mini_bundle: Callable[[str], Path]
) -> None:
    import json

    doc = json.loads((slots_bundle("qwen2") / "bundle.json").read_text(encoding="utf-8"))
    single = json.loads((mini_bundle("qwen2") / "bundle.json").read_text(encoding="utf-8"))
    assert doc["llm"]["version"] == 3
    assert doc["llm"]["slots"] == SLOTS
    assert doc["llm"]["inputs"]["slot"] == "cache_slot"
    # Four caches of the same length: four times the one-conversation bundle's.
    assert doc["memory"]["kv_cache_bytes"] == SLOTS * single["memory"]["kv_cache_bytes"]


def test_a_slot_outside_the_program_or_named_twice_is_refused(
    slots_bundle: Callable[..., Path],
) -> None:
    runner = _runner(slots_bundle("llama"))
    with pytest.raises(TrtEdgeError, match=r"names slot 4: the program holds slots \[0, 4\)"):
        _call(runner, "decode", [[1]], [0], [SLOTS])
    with pytest.raises(TrtEdgeError, match="names slot 1 twice"):
        _call(runner, "decode", [[1], [2]], [0, 0], [1, 1])


def _validate(
    tmp_path: Path,
    folder: Path,
    profiles: str,
    extra: str = "",
    build: str = "",
    refused: bool = True,
) -> str:
    manifest = tmp_path / "manifest.yaml"
    manifest.write_text(
        "apiVersion: trt-edge/v1\nkind: Model\nmetadata: {name: m, version: 0.1.0}\n"
        f"model:\n  huggingface: {{path: {folder}, max_cache_len: 48{extra}}}\n"
        f"profiles:\n{profiles}"
        "runtime:\n  policy: pinned\n  slots: 4\n  phases: {prefill: prefill, decode: decode}\n"
        f"build: {{backend: xnnpack, targets: [cpu-x86_64]{build}}}\n",
        encoding="utf-8",
    )
    done = subprocess.run(
        [sys.executable, "-m", "trt_edge", "validate", str(manifest)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (done.returncode != 0) == refused, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    return done.stderr


def test_slots_that_a_runner_could_not_honour_are_refused_at_validate(
    tmp_path: Path, mini_project: Callable[[str], Path]
) -> None:
    folder = mini_project("qwen3").parent / "folder"
    profiles = (
        "  - {name: decode, dims: {batch: {min: 1, opt: 4, max: 8}, seq: 1}}\n"
        "  - {name: prefill, dims: {batch: 2, seq: {min: 2, opt: 8, max: 24}}}\n"
    )
    errors = _validate(tmp_path, folder, profiles, ", attention: all")
    assert "profiles[0].dims.batch: batch max 8 exceeds runtime.slots 4" in errors
    assert "profiles[1].dims.batch: batch min 2" in errors
    fine = (
        "  - {name: decode, dims: {batch: {min: 1, opt: 4, max: 4}, seq: 1}}\n"
        "  - {name: prefill, dims: {batch: 1, seq: {min: 2, opt: 8, max: 24}}}\n"
    )
    errors = _validate(tmp_path, folder, fine)  # attention filled, the default
    assert "model.huggingface: attention filled serves one conversation per program" in errors
    assert "set attention: all" in errors
    errors = _validate(
        tmp_path,
        folder,
        "  - {name: decode, dims: {seq: 1}}\n"
        "  - {name: prefill, dims: {seq: {min: 2, opt: 8, max: 24}}}\n",
        ", attention: all",
    )
    assert "does not give symbol 'batch'" in errors
    # Quantized linear layers build with slots (test_rows_of_a_batch_equal_each_conversation_alone).
    quantize = f", quantize: {LINEAR_8DA4W}"
    quantized = _validate(tmp_path, folder, fine, ", attention: all", quantize, refused=False)
    assert "quantize" not in quantized
