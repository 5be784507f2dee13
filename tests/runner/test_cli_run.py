"""`trt-edge run` / `trt-edge-device run` / `trt-edge-device info` on real bundles.

`trt-edge run` executes in ExecuTorch's Python runtime, `trt-edge-device run` in the
C++ runner (the `trt_edge_run` binary, found through $TRT_EDGE_RUNNER): the same
command, so both accept, refuse and print alike."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path

import numpy as np
import pytest
from trt_edge.cli.main import main as host_main
from trt_edge_runner.device_cli import main as device_main
from trt_edge_runner.runner import Runner
from trt_edge_runner.tensors import load_npz

from tests.helpers.bundles import VOCAB

pytestmark = pytest.mark.slow


def test_run_json_reports_profile_shapes_and_latency(
    llm_like_bundle: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert host_main(["run", str(llm_like_bundle), "--phase", "prefill", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["profile"] == 1 and report["profile_name"] == "prefill"
    assert report["mode"] == "emulated"
    # Sized by the prefill profile's opt (16) since no --dims was given.
    assert report["inputs"][0] == {"name": "ids", "shape": [1, 16], "dtype": "int64"}
    assert report["outputs"] == [{"name": "hidden", "shape": [1, 16, 8], "dtype": "float32"}]
    assert report["latency_ms"] > 0


@pytest.fixture
def on_device(trt_edge_run: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """`trt-edge-device` in this process finds the C++ runner, and no device.json."""
    monkeypatch.setenv("TRT_EDGE_RUNNER", str(trt_edge_run))
    monkeypatch.setenv("TRT_EDGE_CONFIG", str(tmp_path / "no-device.json"))
    return trt_edge_run


def test_run_inputs_and_saved_outputs_match_the_python_runner(
    llm_like_bundle: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], on_device: Path
) -> None:
    """.npz in and out without numpy on the device side: unpacked for, and packed from, the
    C++ runner's .npy directories; the outputs equal the Python runner's."""
    ids = np.random.default_rng(1).integers(0, VOCAB, size=(1, 7), dtype=np.int64)
    scale = np.array([2.0], dtype=np.float32)
    inputs = tmp_path / "in.npz"
    np.savez(inputs, ids=ids, scale=scale)
    outputs = tmp_path / "out" / "o.npz"
    code = device_main(
        [
            "run",
            str(llm_like_bundle),
            "--auto",
            "--inputs",
            str(inputs),
            "--save-outputs",
            str(outputs),
        ]
    )
    assert code == 0
    text = capsys.readouterr().out
    assert "profile 1 (prefill) for request auto" in text
    assert "output hidden: shape [1, 7, 8] float32" in text
    with np.load(outputs) as saved:
        expected = Runner.open(llm_like_bundle).run(1, [ids, scale]).outputs[0]
        np.testing.assert_array_equal(saved["hidden"], expected)
    assert len(load_npz(inputs, Runner.open(llm_like_bundle).manifest)) == 2


@pytest.mark.parametrize("program", ["trt-edge run", "trt-edge-device run"])
@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--phase", "decode", "--dims", "seq=5"], "dim 1 = 5 is outside profile 0"),
        (["--phase", "warmup"], "unknown phase 'warmup'"),
        (["--profile", "3"], "pins profile 3"),
        (["--profile", "-1"], "a profile index must be at least 0"),
        (["--auto", "--dims", "len=3"], "no symbol 'len'"),
        (["--auto", "--dims", "seq"], "expected SYM=INT"),
    ],
)
def test_bad_requests_exit_2_with_a_message(
    llm_like_bundle: Path,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    message: str,
    program: str,
    on_device: Path,
) -> None:
    main = host_main if program == "trt-edge run" else device_main
    assert main(["run", str(llm_like_bundle), *argv]) == 2
    err = capsys.readouterr().err
    # One error line (a bad --profile is argparse's usage error, after its usage lines).
    errors = [line for line in err.splitlines() if line.startswith(f"{program}: error: ")]
    assert len(errors) == 1 and message in errors[0], err
    assert "Traceback" not in err


def test_tampered_bundle_exits_1(
    llm_like_bundle: Path, capsys: pytest.CaptureFixture[str], on_device: Path
) -> None:
    pte = llm_like_bundle / "model.pte"
    pte.write_bytes(pte.read_bytes() + b"\0")
    assert device_main(["run", str(llm_like_bundle), "--phase", "decode"]) == 1
    assert "model.pte: size" in capsys.readouterr().err


def test_device_info_entry_point_reports_mode_and_backends(
    llm_like_bundle: Path, on_device: Path
) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "trt_edge_runner.device_cli",
            "info",
            str(llm_like_bundle),
            "--json",
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    runner = report["device"]["runner"]
    assert report["device"]["engine"] == "cpp"
    assert runner["path"] == str(on_device) and runner["found_by"] == "$TRT_EDGE_RUNNER"
    assert "XnnpackBackend" in runner["backends"]
    assert runner["native_profile_guard"] is False
    assert runner["executorch"] == report["device"]["executorch"] == version("executorch")
    assert report["bundle"]["mode"] == "emulated" and report["bundle"]["profile0_only"] is False
    assert report["bundle"]["phases"] == {"decode": 0, "prefill": 1}


@pytest.mark.parametrize(
    ("main", "command", "option", "example"),
    [
        (host_main, ["bench", "--iterations", "3"], "--plot", "bench.png"),
        (device_main, ["run", "--phase", "decode"], "--save-outputs", "outputs.npz"),
    ],
    ids=["trt-edge-bench-plot", "trt-edge-device-run-save-outputs"],
)
def test_an_output_path_that_is_a_directory_is_refused_before_any_work(
    llm_like_bundle: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    main: Callable[[list[str]], int],
    command: list[str],
    option: str,
    example: str,
) -> None:
    name, *options = command
    assert main([name, str(llm_like_bundle), *options, option, str(tmp_path)]) == 2
    captured = capsys.readouterr()
    assert f"{name}: error: {option} {tmp_path}: is a directory" in captured.err
    assert str(tmp_path / example) in captured.err  # the hint names a file to write
    assert "Traceback" not in captured.err and captured.out == ""  # nothing ran or was timed


def test_a_broken_inputs_file_exits_2_naming_it(
    llm_like_bundle: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "empty.npz"
    empty.write_bytes(b"")
    assert host_main(["run", str(llm_like_bundle), "--auto", "--inputs", str(empty)]) == 2
    err = capsys.readouterr().err
    assert f"trt-edge run: error: {empty}: the inputs file is empty" in err
    assert "Traceback" not in err
