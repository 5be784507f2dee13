"""`trt-edge-device generate --prompt/--chat/--messages/--stop`: text in and out on a device,
the C++ runner generating, the bundle's tokenizer and chat template (trt_edge_runner.text)
around it; prompt ids equal transformers' encoding of the same text or chat."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from trt_edge_runner.errors import EXIT_BAD_INPUT

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("llm-gemma3")]

TEXT = "The cache is a buffer of keys and values"


@pytest.fixture
def device_generate(
    trt_edge_run: Path, tmp_path: Path
) -> Callable[..., subprocess.CompletedProcess[str]]:
    """`trt-edge-device generate ARGS...` in a subprocess, the C++ runner from the fixture."""
    env = {
        **os.environ,
        "TRT_EDGE_RUNNER": str(trt_edge_run),
        "TRT_EDGE_CONFIG": str(tmp_path / "device.json"),
        "TRT_EDGE_ROOT": str(tmp_path / "root"),
    }

    def run(*args: str | Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        argv = [sys.executable, "-m", "trt_edge_runner.device_cli", "generate", *map(str, args)]
        return subprocess.run(
            argv, env=env, input=stdin, capture_output=True, text=True, timeout=300, check=False
        )

    return run


@pytest.fixture
def gemma(mini_project: Callable[[str], Path], mini_bundle: Callable[[str], Path]) -> Any:
    """(transformers' tokenizer for the folder, the bundle)."""
    from transformers import AutoTokenizer

    folder = mini_project("gemma3").parent / "folder"
    return AutoTokenizer.from_pretrained(folder, local_files_only=True), mini_bundle("gemma3")


def as_ids(encoded: Any) -> list[int]:
    """Ids from a tokenizer call or `apply_chat_template` (a BatchEncoding)."""
    return [int(i) for i in encoded["input_ids"]]


def test_a_text_prompt_comes_back_as_text(gemma: Any, device_generate: Callable[..., Any]) -> None:
    reference, bundle = gemma
    done = device_generate(bundle, "--prompt", TEXT, "--max-new-tokens", "8", "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["prompt_ids"] == as_ids(reference(TEXT))
    assert doc["prompt_text"] == TEXT and len(doc["tokens"]) >= 1
    assert doc["text"] == reference.decode(doc["tokens"], skip_special_tokens=True)
    plain = device_generate(bundle, "--prompt", TEXT, "--max-new-tokens", "8")
    assert plain.returncode == 0 and plain.stdout == doc["text"] + "\n"
    assert "prefill:" in plain.stderr


def test_a_chat_turn_is_rendered_with_the_model_template(
    gemma: Any, device_generate: Callable[..., Any]
) -> None:
    reference, bundle = gemma
    args = ("--prompt", "Name a prime.", "--chat", "--system", "Be brief.")
    done = device_generate(bundle, *args, "--max-new-tokens", "4", "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    chat = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Name a prime."},
    ]
    assert doc["prompt_text"] == reference.apply_chat_template(
        chat, tokenize=False, add_generation_prompt=True
    )
    assert doc["prompt_ids"] == as_ids(
        reference.apply_chat_template(chat, tokenize=True, add_generation_prompt=True)
    )


def test_a_conversation_from_stdin_is_rendered_whole(
    gemma: Any, device_generate: Callable[..., Any]
) -> None:
    reference, bundle = gemma
    chat = [
        {"role": "user", "content": "First?"},
        {"role": "assistant", "content": "One."},
        {"role": "user", "content": "Second?"},
    ]
    done = device_generate(
        bundle, "--messages", "-", "--max-new-tokens", "2", "--json", stdin=json.dumps(chat)
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["prompt_ids"] == as_ids(
        reference.apply_chat_template(chat, tokenize=True, add_generation_prompt=True)
    )


def test_a_stop_string_cuts_the_text_where_it_first_appears(
    gemma: Any, device_generate: Callable[..., Any]
) -> None:
    _, bundle = gemma
    args = ("--prompt", TEXT, "--max-new-tokens", "12", "--json")
    full = json.loads(device_generate(bundle, *args).stdout)["text"]
    assert len(full) >= 6, f"the mini must generate some text to cut: {full!r}"
    stop = full[3:6]
    done = device_generate(bundle, *args, "--stop", stop, "--stop", "never-in-the-text")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["text"] == full[: full.index(stop)]
    assert doc["stop"] == "stop_string" and doc["stop_string"] == stop


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--prompt-ids", "2,5", "--chat"], "--chat needs --prompt TEXT"),
        (["--prompt-ids", "2,5", "--stop", "x"], "--stop needs a text prompt"),
        (["--prompt", "x", "--system", "s"], "--system needs --chat"),
        (["--messages", "/nonexistent/chat.json"], "--messages /nonexistent/chat.json: cannot"),
        (["--messages", "-"], "--messages -: not JSON"),
    ],
)
def test_bad_text_options_are_refused_naming_the_option(
    gemma: Any, device_generate: Callable[..., Any], args: list[str], message: str
) -> None:
    _, bundle = gemma
    done = device_generate(bundle, *args, stdin="not json")
    assert done.returncode == EXIT_BAD_INPUT, done.stderr
    assert message in done.stderr and "Traceback" not in done.stderr


@pytest.mark.xdist_group("llm-llama")
def test_a_chat_with_a_model_without_template_is_refused_naming_the_field(
    mini_bundle: Callable[[str], Path], device_generate: Callable[..., Any]
) -> None:
    bundle = mini_bundle("llama")
    done = device_generate(bundle, "--prompt", "hi", "--chat")
    assert done.returncode == EXIT_BAD_INPUT
    assert f"{bundle}/bundle.json: llm.chat_template is null" in done.stderr
    assert "--prompt" in done.stderr  # the hint: send a plain prompt
