"""`trt-edge-run --generate` from the device tarballs: the aarch64 runner, under qemu,
generates the same greedy tokens as the x86_64 one on the tiny-LLM example (each on the bundle
built for its architecture: the same model.pte), through the same prefill/decode calls."""

from __future__ import annotations

import json

import pytest

from tests.device_tarball.conftest import ExampleBundles
from tests.device_tarball.unpacked import DeviceRunner

pytestmark = pytest.mark.slow

PROMPT = "5,17,42,99,3"


def test_aarch64_generates_the_x86_64_tokens(
    aarch64_runner: DeviceRunner,
    x86_64_runner: DeviceRunner,
    aarch64_examples: ExampleBundles,
    x86_64_examples: ExampleBundles,
) -> None:
    docs = []
    for runner, bundle in (
        (x86_64_runner, x86_64_examples.tiny_llm),
        (aarch64_runner, aarch64_examples.tiny_llm),
    ):
        args = ["--bundle", str(bundle), "--generate", "--prompt-ids", PROMPT]
        done = runner.run("trt-edge-run", *args, "--max-new-tokens", "6", "--json")
        assert done.returncode == 0, done.stderr
        docs.append(json.loads(done.stdout))
    x86, arm = docs
    assert arm["runner"]["arch"] == "aarch64" and x86["runner"]["arch"] == "x86_64"
    assert arm["tokens"] == x86["tokens"] and len(arm["tokens"]) == 6
    calls = [[(s["phase"], s["profile"], s["start"], s["seq"]) for s in d["steps"]] for d in docs]
    assert calls[0] == calls[1]
