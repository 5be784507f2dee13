"""`trt-edge validate` and `trt-edge profiles` as a user runs them (real subprocesses)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TINY = REPO / "examples" / "tiny_llm" / "manifest.yaml"
HEAVY = ("torch", "executorch", "docker", "numpy")

Writer = Callable[..., Path]


def trt_edge(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "trt_edge", *args],
        capture_output=True,
        text=True,
        check=False,
        cwd=REPO,
    )


def test_validate_valid_manifest_exits_0_with_a_summary() -> None:
    proc = trt_edge("validate", str(TINY))
    assert proc.returncode == 0, proc.stderr
    assert "valid: tiny-llm 0.1.0" in proc.stdout
    assert "policy pinned (prefill→1, decode→0)" in proc.stdout
    assert proc.stderr == ""


def test_validate_errors_exit_1_with_located_lines_and_carets(
    base_text: str, write_manifest: Writer
) -> None:
    path = write_manifest(base_text.replace("opt: 128", "opt: 1024"))
    proc = trt_edge("validate", str(path))
    assert proc.returncode == 1
    lines = proc.stderr.splitlines()
    assert lines[0] == (
        f"{path}:15:31: error: profiles[1].dims.seq.opt: opt 1024 is above max 512: "
        "need min <= opt <= max"
    )
    assert lines[1].strip() == "dims: {seq: {min: 2, opt: 1024, max: 512}}"
    assert lines[2].index("^") == lines[1].index("1024")
    assert lines[-1] == f"{path}: 1 error(s), 0 warning(s)"
    assert "Traceback" not in proc.stderr


def test_validate_missing_file_and_bad_flags_exit_2(tmp_path: Path) -> None:
    missing = trt_edge("validate", str(tmp_path / "nope.yaml"))
    assert missing.returncode == 2 and "no such file" in missing.stderr
    bad_flag = trt_edge("validate", "--jsn", str(TINY))
    assert bad_flag.returncode == 2 and "unrecognized arguments" in bad_flag.stderr


def test_validate_json_report(base_text: str, write_manifest: Writer) -> None:
    ok = json.loads(trt_edge("validate", "--json", str(TINY)).stdout)
    assert ok["ok"] is True and ok["export_domain"] == {"seq": [1, 512]}
    path = write_manifest(base_text.replace("[cpu-x86_64]", "[cpu-x86]"))
    proc = trt_edge("validate", "--json", str(path))
    report = json.loads(proc.stdout)
    assert proc.returncode == 1 and report["ok"] is False and report["errors"] == 1
    [d] = report["diagnostics"]
    assert (d["line"], d["col"], d["path"], d["stage"]) == (
        21,
        13,
        "build.targets[0]",
        "compatibility",
    )


def test_profiles_draws_overlaps_and_gaps(base_text: str, write_manifest: Writer) -> None:
    text = base_text.replace("dims: {seq: 1}", "dims: {seq: {min: 1, opt: 2, max: 4}}")
    text = text.replace("min: 2, opt: 128", "min: 3, opt: 16").replace("max: 512", "max: 20")
    path = write_manifest(text)
    proc = trt_edge("profiles", str(path))
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.splitlines()
    assert "0  decode   1/2/4              decode" in out
    assert "1  prefill  3/16/20            prefill" in out
    assert "seq: export domain 1..20 (one column per value)" in out
    bars = {line.split("|")[0].strip(): line.split("|")[1] for line in out if "|" in line}
    assert bars["#0 decode"] == "████" + "·" * 16
    assert bars["#1 prefill"] == "··" + "█" * 18
    assert bars["overlap"] == "  ▲▲" + " " * 16
    assert "overlap: #0 decode and #1 prefill at seq 3..4" in out


def test_profiles_marks_a_gap(base_text: str, write_manifest: Writer) -> None:
    path = write_manifest(base_text.replace("min: 2, opt: 128", "min: 100, opt: 128"))
    proc = trt_edge("profiles", str(path))
    assert proc.returncode == 0
    assert "gap: no profile accepts seq 2..99" in proc.stdout
    assert any(line.strip().startswith("gap") and "✗" in line for line in proc.stdout.splitlines())


def test_profiles_prints_each_warning_on_its_own_line_after_the_summary(
    base_text: str, write_manifest: Writer
) -> None:
    path = write_manifest(base_text.replace("min: 2, opt: 128", "min: 1, opt: 128"))
    proc = trt_edge("profiles", str(path))
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""  # one stream, in order: nothing can interleave with it
    out = proc.stdout.splitlines()
    at = out.index("overlap: #0 decode and #1 prefill at seq 1")
    assert out[at + 1 : at + 3] == ["", "1 warning(s):"]
    assert out[at + 3] == (
        f"{path}:14:5: warning: profiles[1]: profiles 'decode' (#0) and 'prefill' (#1) "
        "overlap at seq 1; harmless under policy pinned (each phase names its profile)"
    )
    assert out[at + 4].strip() == "- name: prefill" and out[at + 5].strip() == "^"


def test_profiles_on_a_broken_manifest_exits_1(base_text: str, write_manifest: Writer) -> None:
    proc = trt_edge("profiles", str(write_manifest(base_text.replace("opt: 128", "opt: 0"))))
    assert proc.returncode == 1 and "opt 0 is below min 2" in proc.stderr


def _imported_modules(code: str) -> set[str]:
    # -S skips site (so no sitecustomize and no .pth files): add the packages by hand.
    paths = [str(REPO / "sdk"), str(REPO / "device_runner"), *[p for p in sys.path if p]]
    proc = subprocess.run(
        [sys.executable, "-S", "-c", f"import sys; sys.path[:0] = {paths!r}\n{code}"],
        capture_output=True,
        text=True,
        check=False,
        cwd=REPO,
    )
    assert proc.returncode == 0, proc.stderr
    return set(proc.stdout.split())


def test_help_and_validate_import_no_heavy_library() -> None:
    for argv in (["--help"], ["validate", str(TINY)]):
        code = (
            "import contextlib, io, sys\n"
            "from trt_edge.cli.main import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    try:\n"
            f"        main({argv!r})\n"
            "    except SystemExit:\n"
            "        pass\n"
            "print(' '.join(sys.modules))\n"
        )
        loaded = _imported_modules(code)
        heavy = sorted(m for m in loaded if m.split(".")[0] in HEAVY)
        assert heavy == [], f"trt-edge {' '.join(argv)} imported {heavy}"
        assert "trt_edge.manifest" in loaded or argv == ["--help"]


def test_validate_colours_its_report_on_a_terminal(base_text: str, write_manifest: Writer) -> None:
    """On a TTY the same lines come out coloured by rich (and stay plain in a pipe)."""
    import os
    import pty

    path = write_manifest(base_text.replace("opt: 128", "opt: 1024"))
    leader, follower = pty.openpty()
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "200"}
    env.pop("NO_COLOR", None)
    proc = subprocess.run(
        [sys.executable, "-m", "trt_edge", "validate", str(path)],
        stdin=follower,
        stdout=follower,
        stderr=follower,
        env=env,
        cwd=REPO,
        check=False,
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    out = b"".join(chunks).decode()
    assert proc.returncode == 1
    assert "\x1b[" in out, "expected ANSI colour codes on a terminal"
    assert "opt 1024 is above max 512: need min <= opt <= max" in out
