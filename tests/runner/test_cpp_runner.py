"""The C++ runner (`trt-edge-run`) on real bundles: same outputs as the Python runner.

Inputs go in as a directory of `<input>.npy` files and outputs come back the
same way, so both runners see byte-identical tensors. Also run by ctest
(`make test-cpp`), which points $TRT_EDGE_RUN at the binary it just built.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from trt_edge_runner.runner import Runner
from trt_edge_runner.runner_interface import (
    EXIT_BUNDLE_FORMAT,
    EXIT_BUNDLE_INTEGRITY,
    EXIT_PROGRAM_LOAD,
    EXIT_REQUEST_REFUSED,
    EXIT_USAGE,
)
from trt_edge_runner.tensors import random_inputs

from tests.helpers.bundles import VOCAB

pytestmark = pytest.mark.slow


def run_cpp(binary: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(binary), *args], capture_output=True, text=True, check=False, timeout=600
    )


def save_inputs(directory: Path, names: list[str], arrays: list[np.ndarray]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for name, array in zip(names, arrays, strict=True):
        np.save(directory / f"{name}.npy", array)
    return directory


def compare(
    binary: Path,
    bundle: Path,
    tmp_path: Path,
    request: list[str],
    target: object,
    arrays: list[np.ndarray],
) -> dict[str, object]:
    runner = Runner.open(bundle)
    names = [s.name for s in runner.manifest.inputs]
    inputs = save_inputs(tmp_path / "in", names, arrays)
    out = tmp_path / "out"
    proc = run_cpp(
        binary,
        "--bundle",
        str(bundle),
        *request,
        "--inputs",
        str(inputs),
        "--outputs",
        str(out),
        "--json",
    )
    assert proc.returncode == 0, proc.stderr
    report: dict[str, object] = json.loads(proc.stdout.strip().splitlines()[-1])
    expected = runner.run(target, arrays)  # type: ignore[arg-type]
    assert report["profile"] == expected.profile
    out_names = [s.name for s in runner.manifest.outputs] or [
        f"output_{i}" for i in range(len(expected.outputs))
    ]
    for name, want in zip(out_names, expected.outputs, strict=True):
        got = np.load(out / f"{name}.npy")
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    return report


def test_cpp_matches_python_on_tiny_bundle_per_phase(
    trt_edge_run: Path, llm_like_bundle: Path, tmp_path: Path
) -> None:
    rng = np.random.default_rng(0)
    scale = np.array([0.25], dtype=np.float32)
    for phase, seq in [("prefill", 33), ("decode", 1)]:
        ids = rng.integers(0, VOCAB, size=(1, seq), dtype=np.int64)
        report = compare(
            trt_edge_run, llm_like_bundle, tmp_path / phase, ["--phase", phase], phase, [ids, scale]
        )
        assert report["mode"] == "emulated"


def test_cpp_matches_python_on_the_tiny_llm_bundle(
    trt_edge_run: Path, tiny_llm_bundle: Path, tmp_path: Path
) -> None:
    manifest = Runner.open(tiny_llm_bundle).manifest
    for phase, seq in [("prefill", 24), ("decode", 1)]:
        arrays = random_inputs(manifest, {"seq": seq}, seed=seq)
        arrays[1] = np.array([3], dtype=np.int64)  # start_pos
        compare(trt_edge_run, tiny_llm_bundle, tmp_path / phase, ["--phase", phase], phase, arrays)


def test_cpp_auto_and_policy_ignoring_runner(
    trt_edge_run: Path, llm_like_bundle: Path, tmp_path: Path
) -> None:
    proc = run_cpp(
        trt_edge_run, "--bundle", str(llm_like_bundle), "--auto", "--dims", "seq=40", "--json"
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.strip().splitlines()[-1])["profile"] == 1
    proc = run_cpp(
        trt_edge_run,
        "--bundle",
        str(llm_like_bundle),
        "--phase",
        "prefill",
        "--dims",
        "seq=1",
        "--ignore-policy",
        "--json",
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.strip().splitlines()[-1])["profile"] == 0
    assert "profile 0 only" in proc.stderr


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["--phase", "warmup"], EXIT_REQUEST_REFUSED, "unknown phase 'warmup'"),
        (["--profile", "5"], EXIT_REQUEST_REFUSED, "pins profile 5"),
        (["--profile", "-1"], EXIT_USAGE, "never negative"),
        (
            ["--phase", "decode", "--dims", "seq=3"],
            EXIT_REQUEST_REFUSED,
            "'ids' dim 1 = 3 is outside profile 0",
        ),
        (["--auto", "--dims", "seq=65"], EXIT_REQUEST_REFUSED, "no profile matches inputs"),
        (["--auto", "--phase", "decode"], EXIT_USAGE, "exactly one of"),
        (["--auto", "--bench", "-5"], EXIT_USAGE, "--bench -5: must be between 1 and"),
        (["--auto", "--bench", "0"], EXIT_USAGE, "--bench 0: must be between 1 and"),
        (["--auto", "--bench", "5x"], EXIT_USAGE, "--bench 5x: expected an integer"),
        (["--auto", "--dims", "seq=-3"], EXIT_USAGE, "--dims seq=-3: must be between 1 and"),
    ],
)
def test_cpp_bad_requests_fail_clearly(
    trt_edge_run: Path, llm_like_bundle: Path, args: list[str], code: int, message: str
) -> None:
    proc = run_cpp(trt_edge_run, "--bundle", str(llm_like_bundle), *args)
    assert proc.returncode == code
    assert "trt-edge-run: error: " in proc.stderr and message in proc.stderr


def test_cpp_refuses_a_tampered_bundle(trt_edge_run: Path, llm_like_bundle: Path) -> None:
    clean = run_cpp(trt_edge_run, "--bundle", str(llm_like_bundle), "--phase", "decode", "--json")
    assert json.loads(clean.stdout.strip().splitlines()[-1])["digests_verified"], (
        "trt-edge-run was built without OpenSSL and checks sizes only: install libssl-dev "
        "(.ci/sysdeps) and rebuild"
    )
    pte = llm_like_bundle / "model.pte"
    data = bytearray(pte.read_bytes())
    data[100] ^= 1
    pte.write_bytes(bytes(data))
    proc = run_cpp(trt_edge_run, "--bundle", str(llm_like_bundle), "--phase", "decode")
    assert proc.returncode == EXIT_BUNDLE_INTEGRITY
    assert "model.pte: sha256" in proc.stderr


def test_cpp_bench_reports_runner_and_raw_latency(
    trt_edge_run: Path, llm_like_bundle: Path
) -> None:
    proc = run_cpp(
        trt_edge_run,
        "--bundle",
        str(llm_like_bundle),
        "--phase",
        "decode",
        "--bench",
        "20",
        "--json",
    )
    assert proc.returncode == 0, proc.stderr
    bench = json.loads(proc.stdout.strip().splitlines()[-1])["bench"]
    assert bench["iterations"] == 20
    assert bench["runner_us_p50"] > 0 and bench["raw_execute_us_p50"] > 0


def test_cpp_malformed_bundle_json_is_a_bundle_format_refusal(
    trt_edge_run: Path, llm_like_bundle: Path
) -> None:
    (llm_like_bundle / "bundle.json").write_text('{"schema_version": 1,', encoding="utf-8")
    proc = run_cpp(trt_edge_run, "--bundle", str(llm_like_bundle), "--auto")
    assert proc.returncode == EXIT_BUNDLE_FORMAT
    assert "bundle.json: not valid JSON" in proc.stderr


def test_cpp_threads_keep_their_own_guards(trt_edge_run: Path, llm_like_bundle: Path) -> None:
    # Built next to trt-edge-run: two threads share one ProfiledModule, each pinned
    # differently; every execution must run its own thread's profile, same outputs.
    proc = run_cpp(trt_edge_run.parent / "trt-edge-run-threads", str(llm_like_bundle))
    assert proc.returncode == 0, proc.stderr
    assert "ok: 2 threads x 25 executions on profiles 0 and 1" in proc.stdout


def test_cpp_hides_cpu_probe_lines_but_not_runtime_errors(
    trt_edge_run: Path, llm_like_bundle: Path, tmp_path: Path
) -> None:
    quiet = run_cpp(trt_edge_run, "--bundle", str(llm_like_bundle), "--phase", "decode")
    assert quiet.returncode == 0, quiet.stderr
    assert "cpuinfo_utils" not in quiet.stderr
    # A truncated model.pte (size check skipped): ExecuTorch's own error line still shows.
    broken = tmp_path / "broken"
    shutil.copytree(llm_like_bundle, broken)
    pte = broken / "model.pte"
    pte.write_bytes(pte.read_bytes()[: pte.stat().st_size // 2])
    failed = run_cpp(trt_edge_run, "--bundle", str(broken), "--phase", "decode", "--no-verify")
    assert failed.returncode == EXIT_PROGRAM_LOAD
    assert "E executorch:program.cpp" in failed.stderr and "trt-edge-run: error:" in failed.stderr
    if os.uname().machine == "x86_64":  # where XNNPACK's probe prints them
        loud = subprocess.run(
            [str(trt_edge_run), "--bundle", str(llm_like_bundle), "--phase", "decode"],
            capture_output=True,
            text=True,
            check=False,
            timeout=600,
            env={**os.environ, "TRT_EDGE_RUNTIME_LOGS": "1"},
        )
        assert "cpuinfo_utils.cpp" in loud.stderr


def test_cpp_names_a_missing_operator_and_what_to_do(trt_edge_run: Path, tmp_path: Path) -> None:
    """A program calling an operator this runner carries no kernel for (here ExecuTorch's
    `llama::fast_hadamard_transform`, which its Python runtime has) is refused at load as a
    bundle for a newer runner — what an older trt-edge-run meets in a newer SDK's bundle —
    with ExecuTorch's log line naming the operator."""
    import executorch.extension.llm.custom_ops.custom_ops  # noqa: F401  (the op's export kernel)
    import torch
    from executorch.exir import to_edge_transform_and_lower
    from torch.export import Dim, export

    from tests.helpers.bundles import WIDTH, write_bundle

    class WithCustomOp(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.emb = torch.nn.Embedding(VOCAB, WIDTH)

        def forward(self, ids: torch.Tensor, scale: torch.Tensor) -> tuple[torch.Tensor]:
            return (torch.ops.llama.fast_hadamard_transform(self.emb(ids) * scale),)

    seq = Dim("seq", min=1, max=64)
    exported = export(
        WithCustomOp(),
        (torch.zeros(1, 4, dtype=torch.int64), torch.ones(1)),
        dynamic_shapes={"ids": {1: seq}, "scale": None},
    )
    pte = tmp_path / "custom.pte"
    pte.write_bytes(to_edge_transform_and_lower(exported).to_executorch().buffer)
    bundle = write_bundle(tmp_path / "bundle", pte)

    proc = run_cpp(trt_edge_run, "--bundle", str(bundle), "--load", "--json")
    assert proc.returncode == EXIT_PROGRAM_LOAD, proc.stderr
    error = json.loads(proc.stdout.strip().splitlines()[-1])["error"]
    assert error["kind"] == "program_load"
    assert "calls an operator this trt-edge-run has no kernel for" in error["message"]
    assert "install the trt-edge-run of the SDK that built it" in error["message"]
    assert "Missing operator" in proc.stderr and "fast_hadamard_transform" in proc.stderr
