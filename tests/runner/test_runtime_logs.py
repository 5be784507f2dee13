"""The ExecuTorch runtime's CPU-probe lines are hidden by default, never real messages."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from trt_edge_runner.runtime_stderr import quiet_runtime_stderr

NOISE = "[cpuinfo_utils.cpp:71] Reading file /sys/devices/soc0/image_version\n"
REAL = "E 00:00:00.1 method.cpp:1] a real runtime error\n"


def _write_fd2(text: str) -> None:
    os.write(2, text.encode())  # the way C++ ET_LOG writes: below sys.stderr


def test_known_noise_is_dropped_and_other_lines_replayed(capfd: pytest.CaptureFixture[str]) -> None:
    with quiet_runtime_stderr():
        _write_fd2(NOISE + REAL)
    err = capfd.readouterr().err
    assert "cpuinfo_utils" not in err and REAL in err


def test_everything_is_replayed_when_the_load_fails(capfd: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(RuntimeError, match="load failed"), quiet_runtime_stderr():
        _write_fd2(NOISE + REAL)
        raise RuntimeError("load failed")
    err = capfd.readouterr().err
    assert NOISE in err and REAL in err
    _write_fd2("after\n")  # fd 2 is restored
    assert capfd.readouterr().err == "after\n"


def test_show_all_passes_everything_through(capfd: pytest.CaptureFixture[str]) -> None:
    with quiet_runtime_stderr(show_all=True):
        _write_fd2(NOISE)
    assert NOISE in capfd.readouterr().err


@pytest.mark.slow
def test_trt_edge_run_stderr_is_free_of_cpu_probe_lines(llm_like_bundle: Path) -> None:
    def run(*extra: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        code = "from trt_edge.cli.main import main; raise SystemExit(main())"
        return subprocess.run(
            [sys.executable, "-c", code, "run", str(llm_like_bundle), "--phase", "decode", *extra],
            capture_output=True,
            text=True,
            check=False,
            timeout=300,
            env={**os.environ, **(env or {})},
        )

    quiet = run(env={"TRT_EDGE_RUNTIME_LOGS": "0"})
    assert quiet.returncode == 0, quiet.stderr
    assert "cpuinfo_utils" not in quiet.stderr
    loud = run("-v")
    assert loud.returncode == 0, loud.stderr
    if sys.platform == "linux" and os.uname().machine == "x86_64":
        # XNNPACK's probe prints these on x86 Linux (what the hiding is for).
        assert "cpuinfo_utils" in loud.stderr


def test_concurrent_captures_restore_the_real_stderr(capfd: pytest.CaptureFixture[str]) -> None:
    import threading

    start = threading.Barrier(4)

    def load(i: int) -> None:
        start.wait()
        with quiet_runtime_stderr():
            _write_fd2(NOISE + f"line {i}\n")

    threads = [threading.Thread(target=load, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    _write_fd2("after\n")
    err = capfd.readouterr().err
    assert err.endswith("after\n") and "cpuinfo_utils" not in err
    assert all(f"line {i}\n" in err for i in range(4))
