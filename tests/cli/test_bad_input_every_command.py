"""Every sub-command of `trt-edge` and `trt-edge-device`, given a bad input, exits with
its code and one `PROG CMD: error:` line that names the bad file or value — never a
traceback. The commands come from the shell's own discovery, so a new command (or a
new `images`/`keys` action) without a case here fails `test_every_command_has_a_case`.

Also, once each against the real programs: Ctrl-C (exit 130, one line), a reader
that went away (quiet, exit 0), `--json` commands printing one error document, and
`validate` (exit 1: checking ran and found problems) against `build` (exit 2: the
manifest is bad input) on the same invalid manifest.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from trt_edge.cli.main import SHELL as HOST
from trt_edge_runner.agent.store import DeviceStore
from trt_edge_runner.device_cli import SHELL as DEVICE
from trt_edge_runner.errors import EXIT_BAD_INPUT, EXIT_FAILED, EXIT_INTERRUPTED

from tests.helpers.waits import wait_until

ROOT = Path(__file__).resolve().parents[2]
TINY_LLM = ROOT / "examples" / "tiny_llm" / "manifest.yaml"
LINEAR = ROOT / "tests" / "containers" / "models" / "linear" / "manifest.yaml"  # lowers fast
NO_ENGINE = "unix:///nonexistent/docker.sock"
MODULES = {"trt-edge": "trt_edge", "trt-edge-device": "trt_edge_runner.device_cli"}


@dataclass(frozen=True)
class Case:
    """A bad command line (built in a scratch folder), its exit code and what stderr names."""

    argv: Callable[[Path], list[str]]
    code: int
    names: str
    env: tuple[tuple[str, str], ...] = ()


def _bad_json(place: Path) -> str:
    path = place / "device.json"
    path.write_text("{not json")
    return str(path)


def _a_file(place: Path) -> str:
    path = place / "a-file"
    path.write_text("not a directory")
    return str(path)


def missing(name: str, *rest: str | Path) -> Case:
    """The command given a file `name` that does not exist, then `rest` (a `Path` there is a
    file in the scratch folder): exit 2, naming `name`."""
    return Case(
        lambda p: [str(p / name), *(str(p / r) if isinstance(r, Path) else r for r in rest)],
        EXIT_BAD_INPUT,
        name,
    )


MISSING_BUNDLE = missing("no-bundle")
NO_ENGINE_ENV = (("DOCKER_HOST", NO_ENGINE),)
NO_ENGINE_CASE = Case(lambda p: [], EXIT_FAILED, "no Docker engine answers", NO_ENGINE_ENV)
UNKNOWN_IMAGE = Case(lambda p: ["no-such-image"], EXIT_BAD_INPUT, "unknown image 'no-such-image'")
ROOT_IS_A_FILE = Case(lambda p: ["--root", _a_file(p)], EXIT_BAD_INPUT, "a-file")

HOST_CASES: dict[tuple[str, ...], Case] = {
    ("serve",): MISSING_BUNDLE,
    ("validate",): missing("m.yaml"),
    ("profiles",): missing("m.yaml"),
    ("build",): missing("m.yaml", "--local"),
    ("lock",): missing("m.yaml"),
    ("run",): missing("no-bundle", "--auto"),
    ("generate",): missing("no-bundle", "--prompt-ids", "1,2"),
    ("bench",): MISSING_BUNDLE,
    ("inspect",): missing("x.pte"),
    ("diff",): missing("old.pte", Path("new.pte")),
    ("images", "build"): UNKNOWN_IMAGE,
    ("images", "list"): NO_ENGINE_CASE,
    ("images", "base"): Case(
        lambda p: ["--mirror", "deb.example/debian"],
        EXIT_BAD_INPUT,
        "--mirror deb.example/debian",
        NO_ENGINE_ENV,
    ),
    ("images", "lock"): UNKNOWN_IMAGE,
    ("images", "dockerfile"): UNKNOWN_IMAGE,
    ("images", "prune"): NO_ENGINE_CASE,
    ("keys", "generate"): Case(lambda p: [_a_file(p)], EXIT_BAD_INPUT, "a-file"),
    ("keys", "rotate"): Case(
        lambda p: ["--current", str(p / "old.key"), "--new", str(p / "new")],
        EXIT_BAD_INPUT,
        "--current",
    ),
    ("keys", "revoke"): Case(
        lambda p: ["ab" * 32, "--key", str(p / "k.key"), "--list", str(p / "r.json")],
        EXIT_BAD_INPUT,
        "k.key",
    ),
    ("keys", "id"): missing("x.pub"),
    ("pack",): missing("no-bundle", "-o", Path("x.tar")),
    ("sign",): missing("no-bundle", "--key", Path("k.key")),
    ("verify",): missing("no-bundle", "--pubkey", Path("k.pub")),
    ("rollout",): missing("plan.yaml", "--inventory", Path("inv.yml")),
    ("fleet", "broker-config"): Case(
        lambda p: ["--out", str(p / "broker"), "--fleet", "lab", "--device", "cam/01"],
        EXIT_BAD_INPUT,
        "cam/01",
    ),
    ("fleet", "status"): Case(
        lambda p: ["--broker", "broker:mqtt", "--fleet", "lab"], EXIT_BAD_INPUT, "broker:mqtt"
    ),
    ("fleet", "rollout"): missing(
        "plan.yaml",
        "--broker",
        "b",
        "--fleet",
        "lab",
        "--reference",
        "registry.lab/m:2",
        "--version",
        "2.0.0",
        "--device",
        "cam-01",
    ),
    ("fleet", "command"): Case(
        lambda p: [
            "--broker",
            "b",
            "--password-file",
            str(p / "no.password"),
            "--fleet",
            "lab",
            "cam-01",
            "hold",
        ],
        EXIT_BAD_INPUT,
        "no.password",
    ),
    ("flash",): Case(
        lambda p: ["--board", "no-board", "--bsp", str(p), "--bundle", str(p / "b.tar")],
        EXIT_BAD_INPUT,
        "--board no-board",
    ),
    ("publish",): missing("no-bundle", "registry:5000/fleet/tiny:1.0.0"),
    ("promote",): Case(lambda p: ["noslash", "stable"], EXIT_BAD_INPUT, "noslash"),
}

DEVICE_CASES: dict[tuple[str, ...], Case] = {
    ("info",): MISSING_BUNDLE,
    ("run",): missing("no-bundle", "--phase", "decode"),
    ("generate",): missing("no-bundle", "--prompt-ids", "1,2"),
    ("install",): missing("b.tar"),
    ("status",): ROOT_IS_A_FILE,
    ("health",): Case(
        lambda p: ["--config", _bad_json(p), "--root", str(p / "state")],
        EXIT_BAD_INPUT,
        "device.json:1:2",
    ),
    ("rollback",): ROOT_IS_A_FILE,
    ("follow",): Case(
        lambda p: ["noslash", "--once", "--root", str(p / "state")], EXIT_BAD_INPUT, "noslash"
    ),
    ("mqtt",): Case(
        lambda p: ["--broker", "b", "--fleet", "lab", "--device", "cam+01"],
        EXIT_BAD_INPUT,
        "cam+01",
    ),
    # Off loopback without an API key: refused before anything listens.
    ("serve",): Case(lambda p: ["--host", "0.0.0.0"], EXIT_BAD_INPUT, "0.0.0.0"),
    ("trust", "add"): missing("r.json"),
    ("trust", "status"): ROOT_IS_A_FILE,
}

PROGRAMS = {"trt-edge": (HOST, HOST_CASES), "trt-edge-device": (DEVICE, DEVICE_CASES)}
ALL_CASES = [
    pytest.param(prog, path, id=f"{prog} {' '.join(path)}")
    for prog, (_, cases) in PROGRAMS.items()
    for path in cases
]


def cli(prog: str, *argv: str) -> list[str]:
    return [sys.executable, "-m", MODULES[prog], *argv]


def run_case(
    prog: str, path: tuple[str, ...], place: Path, *extra: str
) -> tuple[Case, subprocess.CompletedProcess[str]]:
    case = PROGRAMS[prog][1][path]
    done = subprocess.run(
        cli(prog, *path, *case.argv(place), *extra),
        capture_output=True,
        text=True,
        env={**os.environ, **dict(case.env)},
        cwd=place,
        timeout=300,
    )
    return case, done


@pytest.mark.parametrize("prog", PROGRAMS)
def test_every_command_has_a_case(prog: str) -> None:
    shell, cases = PROGRAMS[prog]
    assert set(shell.commands()) == set(cases)


@pytest.mark.parametrize(("prog", "path"), ALL_CASES)
def test_bad_input_gets_one_error_line_and_its_exit_code(
    prog: str, path: tuple[str, ...], tmp_path: Path
) -> None:
    case, done = run_case(prog, path, tmp_path)
    assert done.returncode == case.code, done.stderr
    assert "Traceback" not in done.stderr
    head = f"{prog} {' '.join(path)}: error: "
    error_lines = [line for line in done.stderr.splitlines() if line.startswith(head)]
    assert len(error_lines) == 1, done.stderr
    assert case.names in error_lines[0], done.stderr


def _help(add_arguments: Callable[..., None] | None) -> str:
    import argparse

    parser = argparse.ArgumentParser()
    if add_arguments is not None:
        add_arguments(parser)
    return parser.format_help()


JSON_CASES = [
    pytest.param(prog, path, id=f"{prog} {' '.join(path)}")
    for prog, (shell, _) in PROGRAMS.items()
    for path, command in shell.commands().items()
    if "--json" in _help(command.add_arguments)
]


@pytest.mark.parametrize(("prog", "path"), JSON_CASES)
def test_json_commands_print_one_error_document(
    prog: str, path: tuple[str, ...], tmp_path: Path
) -> None:
    case, done = run_case(prog, path, tmp_path, "--json")
    assert done.returncode == case.code, done.stderr
    doc = json.loads(done.stdout)  # exactly one document on stdout
    assert doc["ok"] is False and doc["exit_code"] == case.code
    assert case.names in doc["error"] or case.names in done.stderr
    assert "Traceback" not in done.stderr


def test_json_commands_are_found() -> None:
    ids = {p.id for p in JSON_CASES}
    assert {"trt-edge validate", "trt-edge-device health", "trt-edge images list"} <= ids


# ---- validate vs build on the same invalid manifest ------------------------------------
def test_validate_finds_problems_exit_1_build_refuses_bad_input_exit_2(tmp_path: Path) -> None:
    text = LINEAR.read_text()
    (tmp_path / "model.py").write_text((LINEAR.parent / "model.py").read_text())
    manifest = tmp_path / "manifest.yaml"
    manifest.write_text(text.replace("policy: auto", "policy: sometimes"))
    validate = subprocess.run(
        cli("trt-edge", "validate", str(manifest)), capture_output=True, text=True, timeout=120
    )
    build = subprocess.run(
        cli("trt-edge", "build", str(manifest), "--local", "--out", str(tmp_path / "out")),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert validate.returncode == EXIT_FAILED, validate.stderr
    assert build.returncode == EXIT_BAD_INPUT, build.stderr
    lines = build.stderr.splitlines()
    assert lines[0] == f"trt-edge build: error: {manifest}: 1 error in the manifest"
    assert lines[-1] == f"  hint: fix them and run `trt-edge validate {manifest}`"
    # Between them, the diagnostics exactly as validate prints them (file:line:col, the
    # source line, the caret): structured all the way to the renderer.
    diagnostics = validate.stderr.splitlines()[:-1]  # validate's last line is its summary
    assert lines[1:-1] == diagnostics
    assert any(line.strip() == "^" for line in diagnostics)
    assert f"{manifest}:" in diagnostics[0] and "runtime.policy" in diagnostics[0]
    assert not (tmp_path / "out").exists()


def test_unreadable_manifest_is_bad_input_for_validate_and_build(tmp_path: Path) -> None:
    for argv in (["validate"], ["build", "--local"]):
        done = subprocess.run(
            cli("trt-edge", *argv[:1], str(tmp_path), *argv[1:]),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == EXIT_BAD_INPUT, done.stderr
        assert f"trt-edge {argv[0]}: error: {tmp_path}: " in done.stderr


# ---- Ctrl-C and a reader that went away, against the real programs --------------------
def _blocked_on_a_lock(pid: int) -> bool:
    """Whether `pid` waits for a file lock (Linux lists waiters in /proc/locks with `->`)."""
    for line in Path("/proc/locks").read_text().splitlines():
        fields = line.split()
        if "->" in fields and str(pid) in fields:
            return True
    return False


def _still_blocking(process: subprocess.Popen[str]) -> bool:
    """Whether `process` waits for a file lock; an exit meanwhile fails the test at once."""
    assert process.poll() is None, f"exited {process.returncode}: {process.communicate()}"
    return _blocked_on_a_lock(process.pid)


def test_ctrl_c_exits_130_with_one_line(tmp_path: Path) -> None:
    """SIGINT while `trt-edge-device status` waits for the agent's lock, which this test
    holds: the program is inside the command for sure (not still starting Python), in
    plain Python code, so the moment of the interrupt is the same on every run.

    The program starts with SIGINT's default action, as a terminal's foreground job does
    (`env --default-signal`): run from a script's background job (`make test &`), it would
    inherit SIGINT ignored, and Python then never raises KeyboardInterrupt — correctly."""
    import fcntl

    root = tmp_path / "state"
    DeviceStore(root).ensure_layout()
    with open(root / "agent.lock", "a+b") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        process = subprocess.Popen(
            ["env", "--default-signal=INT", *cli("trt-edge-device", "status", "--root", str(root))],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            wait_until(lambda: _still_blocking(process), "the program waiting for the lock")
            process.send_signal(signal.SIGINT)
            out, err = process.communicate(timeout=60)
        finally:
            if process.poll() is None:
                process.kill()
    assert process.returncode == EXIT_INTERRUPTED, err
    assert err == "trt-edge-device status: interrupted\n"
    assert out == ""


@pytest.mark.parametrize(
    "argv",
    [
        pytest.param(["trt-edge", "validate", str(TINY_LLM)], id="trt-edge validate"),
        pytest.param(["trt-edge-device", "status", "--root", "ROOT"], id="trt-edge-device status"),
    ],
)
def test_a_reader_that_went_away_stops_output_quietly(argv: list[str], tmp_path: Path) -> None:
    """`… | head -c1` without the race: the pipe's reading end is closed before the
    program writes, so its first write fails with EPIPE every time."""
    argv = [str(tmp_path / "state") if a == "ROOT" else a for a in argv]
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run(
            cli(argv[0], *argv[1:]),
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    finally:
        os.close(write_end)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr
    assert "Exception ignored" not in done.stderr


@pytest.mark.parametrize(("prog", "path"), ALL_CASES)
def test_every_command_has_help(
    prog: str, path: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    shell, _ = PROGRAMS[prog]
    assert shell.main([*path, "--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: {prog} {' '.join(path)} ")
    command = shell.commands()[path]
    lead = " ".join((command.description or command.help).split()[:4])
    assert lead in " ".join(out.split())  # argparse reflows the description
