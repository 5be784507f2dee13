"""The agent checks every document the runner prints against its schema
(`trt_edge_runner/schemas`, issue 20 point 2): a document with a field missing or of another
type is refused where it is read, as a typed error naming the field — never coerced, never a
KeyError later. The documents are the real runner's, then broken one field at a time."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from trt_edge_runner.agent.config import RunnerSettings, find_runner
from trt_edge_runner.agent.errors import RunnerDocumentInvalid
from trt_edge_runner.agent.runner_process import GenerationStep, RunnerProcess, read_record

from tests.agent.device import Device
from tests.helpers.fixtures_bundles import Bundles


def _real(runner: Path, *args: str) -> tuple[list[str], dict[str, Any]]:
    argv = [str(runner), *args, "--json"]
    done = subprocess.run(argv, capture_output=True, text=True, check=True)
    return argv, json.loads(done.stdout)


def _fed(device: Device, argv: list[str], doc: dict[str, Any]) -> dict[str, Any]:
    runner = RunnerProcess.open(find_runner(device.runner, device.config, RunnerSettings()), 60)
    return runner._document(subprocess.CompletedProcess(argv, 0, json.dumps(doc), ""), "reading")


@pytest.mark.parametrize(
    ("path", "value", "said"),
    [
        (["profile"], "0", "profile: expected integer, got '0'"),
        (["latency_ms"], None, "latency_ms: expected number, got None"),
        (["outputs", 0, "shape"], "1x3", "outputs[0].shape: expected array"),
        (["mode"], "turbo", "mode: expected one of ['emulated', 'native']"),
        (["model", "name"], False, "model.name: expected string"),
    ],
)
def test_a_bad_run_document_is_refused_naming_the_field(
    device: Device, agent_bundles: Bundles, path: list[Any], value: Any, said: str
) -> None:
    argv, doc = _real(device.runner, "--bundle", str(agent_bundles.v1.with_suffix("")), "--auto")
    assert _fed(device, argv, doc) == doc  # the real document passes as it is
    target = doc
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    with pytest.raises(RunnerDocumentInvalid) as refused:
        _fed(device, argv, doc)
    assert refused.value.field == ".".join(str(p) for p in path).replace(".0.", "[0].")
    assert said in str(refused.value) and "runner-run.schema.json" in str(refused.value)


def test_a_missing_field_of_the_load_document_is_named(
    device: Device, agent_bundles: Bundles
) -> None:
    argv, doc = _real(device.runner, "--bundle", str(agent_bundles.v1.with_suffix("")), "--load")
    del doc["profiles"]
    with pytest.raises(
        RunnerDocumentInvalid, match=r"runner-load\.schema\.json.*profiles: missing"
    ):
        _fed(device, argv, doc)


def test_a_read_record_keeps_values_as_json_gave_them() -> None:
    step = {"phase": "decode", "profile": 0, "start": 3, "seq": 1, "ms": 2}
    assert read_record(GenerationStep, step) == GenerationStep("decode", 0, 3, 1, 2)
