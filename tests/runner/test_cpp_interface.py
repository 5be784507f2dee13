"""trt-edge-run's machine interface on real bundles: interface-1 JSON out (errors too), one
exit code per failure kind (the table `--help` prints = `runner_interface`), `--phases`
timings at each phase's opt shape, seeded random inputs inside declared values, the
target.arch check, `--load`, `--progress`."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from trt_edge_runner.bundle_format import BUNDLE_JSON, TensorSpec
from trt_edge_runner.runner_interface import (
    EXIT_BUNDLE_INTEGRITY,
    EXIT_KINDS,
    EXIT_PROGRAM_LOAD,
    EXIT_REQUEST_REFUSED,
    EXIT_TARGET_MISMATCH,
    EXIT_USAGE,
    INTERFACE_VERSION,
)

from tests.helpers.bundles import INPUTS, BundleMaker, eager

pytestmark = pytest.mark.slow


def run(binary: Path, *args: str) -> tuple[int, dict[str, Any], str]:
    done = subprocess.run(
        [str(binary), *args], capture_output=True, text=True, check=False, timeout=300
    )
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 1, done.stdout  # one document
    return done.returncode, json.loads(lines[0]), done.stderr


def edit_bundle_json(bundle: Path, edit: Any) -> None:
    doc = json.loads((bundle / BUNDLE_JSON).read_text())
    edit(doc)
    (bundle / BUNDLE_JSON).write_text(json.dumps(doc))


def test_help_prints_the_exit_code_table_runner_interface_mirrors(trt_edge_run: Path) -> None:
    done = subprocess.run([str(trt_edge_run), "--help"], capture_output=True, text=True, check=True)
    table = dict(re.findall(r"^  (\d+)  (\w+) ", done.stdout.split("Exit codes")[1], re.M))
    assert {int(code): kind for code, kind in table.items() if code != "0"} == EXIT_KINDS
    code, doc, _ = run(trt_edge_run, "--version", "--json")
    assert code == 0 and doc["interface"] == INTERFACE_VERSION and doc["ok"] is True
    assert doc["runner"]["arch"] == os.uname().machine
    assert doc["runner"]["verifies_digests"] is True
    assert "XnnpackBackend" in doc["runner"]["backends"]


def test_phases_times_every_phase_at_its_profile_opt_shape(
    trt_edge_run: Path, llm_like_bundle: Path
) -> None:
    code, doc, err = run(
        trt_edge_run, "--bundle", str(llm_like_bundle), "--phases", "all", "--runs", "4",
        "--warmup", "2", "--json", "--progress",
    )  # fmt: skip
    assert code == 0, err
    assert doc["interface"] == 1 and doc["ok"] is True and doc["mode"] == "emulated"
    assert (doc["runs"], doc["warmup"], doc["seed"]) == (4, 2, 0)
    assert [p["phase"] for p in doc["phases"]] == ["decode", "prefill"]
    decode, prefill = doc["phases"]
    assert (decode["profile"], decode["profile_name"]) == (0, "decode")
    assert decode["request"] == "pinned(0)"
    assert prefill["profile"] == 1 and prefill["outcome"] == "ok"
    assert prefill["inputs"][0] == {"name": "ids", "shape": [1, 16], "dtype": "int64"}  # opt 16
    assert prefill["outputs"] == [{"name": "hidden", "shape": [1, 16, 8], "dtype": "float32"}]
    for phase in doc["phases"]:
        assert len(phase["runs_ms"]) == 4
        assert 0 < phase["min_ms"] <= phase["median_ms"] <= phase["max_ms"]
    stages = re.findall(r"^trt-edge-run: progress: (.*)$", err, re.M)
    assert stages == [
        "reading bundle.json",
        "checking the bundle's files",
        "loading model.pte",
        "running phase decode",
        "running phase prefill",
    ]


def test_random_inputs_stay_inside_declared_values_and_follow_the_seed(
    trt_edge_run: Path, make_bundle: BundleMaker, tiny_model: Any, tmp_path: Path
) -> None:
    """ids declared in [3, 4) must all be 3: the output is then lin(emb(3)) times the random
    scale, i.e. proportional to the eager output for ids = 3."""
    only_three = (TensorSpec("ids", "int64", (1, "seq"), (3, 4)), INPUTS[1])
    bundle = make_bundle([("p", 1, 5, 8)], {"run": 0}, inputs=only_three)

    def outputs(seed: int) -> np.ndarray:
        out = tmp_path / f"out-{seed}"
        args = ["--bundle", str(bundle), "--phase", "run", "--seed", str(seed)]
        code, doc, err = run(trt_edge_run, *args, "--outputs", str(out), "--json")
        assert code == 0, err
        assert doc["inputs"][0]["shape"] == [1, 5]
        result: np.ndarray = np.load(out / "hidden.npy")
        return result

    reference = eager(tiny_model, np.full((1, 5), 3, dtype=np.int64), np.ones(1, np.float32))
    got = outputs(0)
    scale = got.flat[0] / reference.flat[0]
    np.testing.assert_allclose(got, reference * scale, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(outputs(0), got)  # same seed, same inputs
    assert not np.array_equal(outputs(1), got)  # another seed, another scale


@pytest.mark.parametrize(
    ("args", "kind", "where"),
    [
        (["--phase", "warmup"], "request_refused", {"phase": "warmup"}),
        (["--phase", "decode", "--dims", "seq=3"], "request_refused", {"input": "ids"}),
        (["--auto", "--bench", "0"], "usage", {}),
        (["--phases", "all", "--dims", "seq=2"], "usage", {}),
        (["--runs", "2", "--auto"], "usage", {}),
    ],
)
def test_errors_are_json_documents_with_their_kind_and_place(
    trt_edge_run: Path, llm_like_bundle: Path, args: list[str], kind: str, where: dict[str, str]
) -> None:
    code, doc, err = run(trt_edge_run, "--bundle", str(llm_like_bundle), *args, "--json")
    assert doc["interface"] == 1 and doc["ok"] is False
    error = doc["error"]
    assert (
        error["kind"] == kind
        and error["exit_code"]
        == code
        == {
            "usage": EXIT_USAGE,
            "request_refused": EXIT_REQUEST_REFUSED,
        }[kind]
    )
    assert error["message"] in err and f"trt-edge-run: error: {error['message']}" in err
    for key, value in where.items():
        assert error[key] == value


def test_integrity_refusal_lists_every_problem(trt_edge_run: Path, llm_like_bundle: Path) -> None:
    (llm_like_bundle / "extra.txt").write_text("x")
    pte = llm_like_bundle / "model.pte"
    data = bytearray(pte.read_bytes())
    data[50] ^= 1
    pte.write_bytes(bytes(data))
    code, doc, _ = run(trt_edge_run, "--bundle", str(llm_like_bundle), "--auto", "--json")
    assert code == EXIT_BUNDLE_INTEGRITY and doc["error"]["kind"] == "bundle_integrity"
    problems = {(p["kind"], p["path"]) for p in doc["error"]["problems"]}
    assert problems == {("extra", "extra.txt"), ("sha256_mismatch", "model.pte")}


def test_a_bundle_for_another_architecture_is_refused_naming_both(
    trt_edge_run: Path, llm_like_bundle: Path
) -> None:
    other = "aarch64" if os.uname().machine == "x86_64" else "x86_64"
    target = {"id": f"cpu-{other}", "arch": other}
    edit_bundle_json(llm_like_bundle, lambda d: d.update(target=target))
    code, doc, _ = run(trt_edge_run, "--bundle", str(llm_like_bundle), "--phases", "all", "--json")
    assert code == EXIT_TARGET_MISMATCH and doc["error"]["kind"] == "target_mismatch"
    message = doc["error"]["message"]
    assert f"built for {other} (target cpu-{other})" in message
    assert f"this trt-edge-run runs {os.uname().machine} code" in message
    assert doc["error"]["file"].endswith("bundle.json")
    # Its own architecture (or none: "any") runs.
    edit_bundle_json(llm_like_bundle, lambda d: d["target"].update(arch=os.uname().machine))
    assert run(trt_edge_run, "--bundle", str(llm_like_bundle), "--load", "--json")[0] == 0
    edit_bundle_json(llm_like_bundle, lambda d: d.update(target={"id": "cpu"}))
    assert run(trt_edge_run, "--bundle", str(llm_like_bundle), "--load", "--json")[0] == 0


def test_bundle_json_that_disagrees_with_the_program_is_a_load_refusal(
    trt_edge_run: Path, llm_like_bundle: Path
) -> None:
    edit_bundle_json(llm_like_bundle, lambda d: d["io"]["inputs"][1].update(dtype="int64"))
    code, doc, _ = run(trt_edge_run, "--bundle", str(llm_like_bundle), "--load", "--json")
    assert code == EXIT_PROGRAM_LOAD
    assert "input 'scale' is int64 in bundle.json, float32 in the method" in doc["error"]["message"]


def test_load_reports_mode_phases_and_profiles_without_executing(
    trt_edge_run: Path, llm_like_bundle: Path
) -> None:
    code, doc, err = run(trt_edge_run, "--bundle", str(llm_like_bundle), "--load", "--json")
    assert code == 0, err
    assert doc["phases"] == {"decode": 0, "prefill": 1}
    assert doc["profiles"] == ["decode", "prefill"] and doc["profile0_only"] is False
    assert doc["model"] == {"name": "tiny", "version": "0.0.1"}
    assert "outputs" not in doc and "latency_ms" not in doc
    # The memory check reads the process's peak resident set after the load (VmHWM of
    # /proc/self/status) in whole bytes; a process that loaded ExecuTorch holds megabytes.
    assert isinstance(doc["peak_rss_bytes"], int) and doc["peak_rss_bytes"] > 1_000_000
