"""A fresh venv holding only `trt-edge-runner[agent]`: what a device installs.

`python -m venv` (no system site-packages), then `pip install --no-index` of the device
package as a wheel built from this checkout plus its `[agent]` extra (cryptography,
cffi, pycparser) from a local wheelhouse: `pip download` of the pinned cryptography,
once per machine and Python version, into ~/.cache/trt-edge/tests/agent-wheelhouse (the
host's Python; `-py3.10` beside it for another interpreter). Used by the fresh-venv tests
(the host's Python, and JetPack 6's Python 3.10 where this machine has one) and by
benchmarks/bench_device.py (a device-faithful health check: no editable
installs, no torch on the path, byte-compiled modules).
"""

from __future__ import annotations

import glob
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
WHEELHOUSE = Path.home() / ".cache" / "trt-edge" / "tests" / "agent-wheelhouse"


def pinned(package: str) -> str:
    """`package==version` as requirements-dev.txt pins it (the host's stack)."""
    text = (REPO / "requirements-dev.txt").read_text(encoding="utf-8")
    match = re.search(rf"^{re.escape(package)}==(\S+)", text, re.M)
    assert match, f"requirements-dev.txt pins no {package}"
    return f"{package}=={match.group(1)}"


def run(*argv: str | Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(a) for a in argv], capture_output=True, text=True, check=False, timeout=900, env=env
    )


@dataclass(frozen=True)
class AgentVenv:
    root: Path
    packages: dict[str, str]  # what `pip list` says is installed

    @property
    def python(self) -> Path:
        return self.root / "bin" / "python"

    @property
    def device_cli(self) -> Path:
        return self.root / "bin" / "trt-edge-device"


def clean_env() -> dict[str, str]:
    """This process's environment without what would leak the host's packages in."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}


def find_python310() -> Path | None:
    """A working Python 3.10 (JetPack 6's) on this machine: `$TRT_EDGE_PYTHON310`,
    `python3.10` on PATH, or a pyenv build; None when there is none. Each candidate is
    run (a pyenv shim exists on PATH even where the version is not installed)."""
    candidates = [os.environ.get("TRT_EDGE_PYTHON310", ""), shutil.which("python3.10") or ""]
    pyenv = os.environ.get("PYENV_ROOT", str(Path.home() / ".pyenv"))
    candidates += sorted(glob.glob(f"{pyenv}/versions/3.10*/bin/python3.10"))
    for candidate in filter(None, candidates):
        probe = run(candidate, "-c", "import sys, venv; print(sys.version_info[:2])")
        if probe.returncode == 0 and probe.stdout.strip() == "(3, 10)":
            return Path(candidate)
    return None


def _wheelhouse(python: Path | None) -> Path:
    """The `[agent]` extra's wheels for `python` (the host's when None), fetched once."""
    interpreter = str(python) if python is not None else sys.executable
    version = run(interpreter, "-c", "import sys; print('%d.%d' % sys.version_info[:2])")
    assert version.returncode == 0, version.stderr
    house = (
        WHEELHOUSE
        if python is None
        else WHEELHOUSE.with_name(f"{WHEELHOUSE.name}-py{version.stdout.strip()}")
    )
    if not any(house.glob("cryptography-*.whl")):
        # The target interpreter's own pip picks the wheels its tags accept (cffi is per
        # Python version; cryptography is abi3).
        fetched = run(
            interpreter, "-m", "pip", "download", "--disable-pip-version-check",
            "--only-binary=:all:", pinned("cryptography"), "-d", house,
        )  # fmt: skip
        assert fetched.returncode == 0, fetched.stdout + fetched.stderr
    return house


def make_agent_venv(work: Path, python: Path | None = None) -> AgentVenv:
    """Build the venv in `work/venv` (and its wheel in `work/wheels`) with `python` (the
    host's interpreter when None)."""
    # The device package from this checkout, built as a wheel in a copy (no build/ or
    # egg-info left in the tree).
    source = work / "device_runner"
    source.mkdir(parents=True)
    shutil.copy(REPO / "device_runner" / "pyproject.toml", source)
    shutil.copytree(
        REPO / "device_runner" / "trt_edge_runner",
        source / "trt_edge_runner",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    wheels = work / "wheels"
    built = run(
        sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
        "--disable-pip-version-check", "-w", wheels, source,
    )  # fmt: skip
    assert built.returncode == 0, built.stdout + built.stderr
    wheelhouse = _wheelhouse(python)
    venv = work / "venv"
    base = str(python) if python is not None else getattr(sys, "_base_executable", sys.executable)
    made = run(base, "-m", "venv", venv)
    assert made.returncode == 0, made.stderr
    clean = clean_env()
    installed = run(
        venv / "bin" / "pip", "install", "--disable-pip-version-check", "--no-index",
        "--find-links", wheels, "--find-links", wheelhouse, "trt-edge-runner[agent]",
        env=clean,
    )  # fmt: skip
    assert installed.returncode == 0, installed.stdout + installed.stderr
    listed = run(venv / "bin" / "pip", "list", "--format", "json", env=clean)
    packages = {p["name"].lower(): p["version"] for p in json.loads(listed.stdout)}
    return AgentVenv(venv, packages)
