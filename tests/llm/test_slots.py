"""`runtime.slots`: one program holds several conversations' KV caches and advances a batch
of them in one call (issue 29, part 1).

The contract every runner builds on (bundle.json llm version 3): row b of a call reads and
writes slot `cache_slot[b]` at positions `cache_position[b]`, and its logits are the ones the
same call gives alone. Checked here on the real `.pte` through ExecuTorch's runtime: four
conversations prefilled one by one into slots 0..3, then decoded together, against each run
alone in slot 0 of a fresh program — greedy tokens equal and logits bit-equal (rows never mix:
attention is `B * KV` independent matrices; the linear layers' XNNPACK GEMM computes each row
on its own). Quantized linear layers are refused with slots for now (their batched
program's tokens were wrong: docs/serving.md).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from trt_edge_runner.errors import TrtEdgeError
from trt_edge_runner.runner import Runner

from tests.llm.llm_folders import ARCHITECTURES, PREFILL_MAX, SLOTS

PROMPTS = ([5, 17, 99, 3, 250], [7] * 9, list(range(40, 53)), [300, 301, 302])
STEPS = 6


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


@pytest.mark.parametrize("arch", ARCHITECTURES)
def test_rows_of_a_batch_equal_each_conversation_alone(
    arch: str, slots_bundle: Callable[..., Path]
) -> None:
    _assert_rows_equal_alone(slots_bundle(arch))


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


QUANTIZED = ", quantize: {linear: 8da4w, group_size: 32}"


def _validate(tmp_path: Path, folder: Path, profiles: str, extra: str = "", build: str = "") -> str:
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
    assert done.returncode != 0, done.stdout
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
    quantized = _validate(tmp_path, folder, fine, ", attention: all", QUANTIZED)
    assert "build.quantize.linear: quantized linear layers are not built with runtime" in quantized
