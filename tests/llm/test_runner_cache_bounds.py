"""The Python runner refuses cache positions outside [0, max_cache_len) before executing, and
reads the bundle's `llm` section strictly (a section it cannot honour is an error, not a guess)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from trt_edge_runner.bundle_format import BundleFormatError, BundleManifest
from trt_edge_runner.errors import EXIT_BAD_INPUT, InputValueError
from trt_edge_runner.runner import Runner

from tests.llm.llm_folders import MAX_CACHE_LEN

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("llm-llama")]


def inputs(ids: list[int], start: int) -> list[np.ndarray]:
    return [
        np.asarray([ids], dtype=np.int64),
        np.arange(start, start + len(ids), dtype=np.int64),
        np.arange(MAX_CACHE_LEN, dtype=np.int64),  # cache_window: the whole cache covers any call
    ]


@pytest.fixture
def bundle(mini_bundle: Callable[[str], Path]) -> Path:
    return mini_bundle("llama")


def test_the_last_slots_are_usable_and_one_past_is_refused(bundle: Path) -> None:
    runner = Runner.open(bundle)
    runner.run("prefill", inputs([5] * 4, MAX_CACHE_LEN - 4))  # start + seq == max_cache_len
    with pytest.raises(InputValueError) as caught:
        runner.run("prefill", inputs([5] * 4, MAX_CACHE_LEN - 3))
    message = str(caught.value)
    assert message.startswith(
        f"input 'cache_position' holds position {MAX_CACHE_LEN} (start {MAX_CACHE_LEN - 3}, "
        f"seq 4): the KV cache has positions [0, {MAX_CACHE_LEN})"
    )
    assert f"start + seq <= {MAX_CACHE_LEN}" in message
    assert caught.value.exit_code == EXIT_BAD_INPUT


def test_negative_positions_are_refused_and_check_refuses_the_same(bundle: Path) -> None:
    runner = Runner.open(bundle)
    with pytest.raises(InputValueError, match=r"holds position -1 \(start -1, seq 1\)"):
        runner.run("decode", inputs([5], -1))
    with pytest.raises(InputValueError, match="holds position 48"):
        runner.check("decode", inputs([5], MAX_CACHE_LEN))


def test_a_refused_call_leaves_the_cache_untouched(bundle: Path) -> None:
    """Refused before executing: what the next call sees is as if it never happened."""
    plain, probed = Runner.open(bundle), Runner.open(bundle)
    for runner in (plain, probed):
        runner.run("prefill", inputs([7, 8, 9], 0))
    with pytest.raises(InputValueError):
        probed.run("prefill", inputs([11, 12, 13], MAX_CACHE_LEN - 1))  # would write slot 47..49
    a = plain.run("decode", inputs([10], 3)).outputs[0]
    b = probed.run("decode", inputs([10], 3)).outputs[0]
    assert np.array_equal(a, b)


def test_trt_edge_run_says_the_same_for_given_inputs(
    bundle: Path, tmp_path: Path, trt_edge_cli: Callable[..., Any]
) -> None:
    npz = tmp_path / "in.npz"
    np.savez(
        npz,
        input_ids=np.asarray([[3, 4]], np.int64),
        cache_position=np.asarray([47, 48]),
        cache_window=np.arange(MAX_CACHE_LEN),
    )
    done = trt_edge_cli("run", bundle, "--phase", "prefill", "--inputs", npz)
    assert done.returncode == EXIT_BAD_INPUT
    assert "input 'cache_position' holds position 48 (start 47, seq 2)" in done.stderr


def _edited(bundle: Path, edit: Callable[[dict[str, Any]], None]) -> bytes:
    doc = json.loads((bundle / "bundle.json").read_bytes())
    edit(doc["llm"])
    return json.dumps(doc).encode()


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda s: s.update(version=4),
            "llm.version: this runner reads llm section version 1, 2 or 3, the bundle has 4",
        ),
        (
            lambda s: (s.update(version=2), s["inputs"].pop("window", None)),
            "llm.inputs.window: missing",
        ),
        (
            lambda s: s.update(tokenizer="vocab.json"),
            "llm.tokenizer: 'vocab.json' is not listed in files",
        ),
        (
            lambda s: s["inputs"].update(positions="start_pos"),
            "llm.inputs.positions: 'start_pos' is not an input",
        ),
        (lambda s: s.update(logits="logits"), "llm.logits: 'logits' is not an output"),
        (lambda s: s.update(eos_token_ids=[1, "2"]), "llm.eos_token_ids\\[1\\]: expected integer"),
        (lambda s: s.pop("max_cache_len"), "llm.max_cache_len: missing"),
        (lambda s: s.update(max_cache_len=0), "llm.max_cache_len: must be >= 1, got 0"),
    ],
)
def test_a_section_the_runner_cannot_honour_is_a_format_error(
    bundle: Path, edit: Callable[[dict[str, Any]], None], message: str
) -> None:
    with pytest.raises(BundleFormatError, match="bundle.json: " + message.replace("(", r"\(")):
        BundleManifest.from_json(_edited(bundle, edit))


def test_the_section_round_trips_byte_for_byte(bundle: Path) -> None:
    data = (bundle / "bundle.json").read_bytes()
    assert BundleManifest.from_json(data).to_canonical_json() == data
