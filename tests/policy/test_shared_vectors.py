"""The shared vector files beyond profile selection — mode decision, bundle layouts, dtypes —
run through both implementations (the Python conformance module and the C++ binaries built
from device_runner/cpp), each file checked against its readable generator, and each runner
shown to fail on a wrong expectation (so a pass means something). The C++ dtype check needs
the ExecuTorch SDK and lives with the runner tests (tests/runner/test_dtypes.py)."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).parents[2]
VECTORS = ROOT / "tests" / "vectors"
CPP_SRC = ROOT / "device_runner" / "cpp"
SDK_ONLY = ("trt_edge_conformance", "trt_edge_bundle_conformance")


def python_runner(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "trt_edge_runner.conformance", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )


def generator(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, VECTORS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def cases_in(name: str) -> int:
    doc = json.loads((VECTORS / name).read_text(encoding="utf-8"))
    return len(doc.get("cases", doc.get("dtypes", [])))


@pytest.mark.parametrize(
    ("file", "source"),
    [
        ("mode_decision.json", "generate_mode_decision"),
        ("bundle_layouts.json", "generate_bundle_layouts"),
        ("dtypes.json", "generate_dtypes"),
    ],
)
def test_vector_file_is_what_its_generator_writes(file: str, source: str) -> None:
    assert (VECTORS / file).read_text(encoding="utf-8") == generator(source).document(), (
        f"tests/vectors/{file} is stale: run .venv/bin/python tests/vectors/{source}.py"
    )


@pytest.mark.parametrize("file", ["mode_decision.json", "bundle_layouts.json", "dtypes.json"])
def test_python_passes_the_shared_vectors(file: str) -> None:
    done = python_runner(VECTORS / file)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip().splitlines()[-1] == f"{cases_in(file)} passed, 0 failed"


def wrong_expectation(tmp_path: Path, file: str) -> tuple[Path, str]:
    """`file` with its first case's expectation changed on purpose."""
    doc = json.loads((VECTORS / file).read_text(encoding="utf-8"))
    first = doc["cases"][0]
    if file == "mode_decision.json":
        first["expect"]["profile0_only"] = not first["expect"]["profile0_only"]
    else:
        first["expect"] = [{"kind": "extra", "path": "not-there"}]
    path = tmp_path / file
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path, first["name"]


@pytest.mark.parametrize("file", ["mode_decision.json", "bundle_layouts.json"])
def test_python_reports_a_wrong_expectation(tmp_path: Path, file: str) -> None:
    path, name = wrong_expectation(tmp_path, file)
    done = python_runner(path)
    assert done.returncode == 1
    assert f"FAIL {name}: expected" in done.stdout


def test_python_refuses_caps_that_differ_from_the_rule(tmp_path: Path) -> None:
    doc = json.loads((VECTORS / "bundle_layouts.json").read_text(encoding="utf-8"))
    doc["caps"]["max_entries"] = 1000
    path = tmp_path / "caps.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    done = python_runner(path)
    assert done.returncode == 2 and "caps" in done.stderr


def test_python_refuses_an_unknown_format(tmp_path: Path) -> None:
    path = tmp_path / "odd.json"
    path.write_text('{"format": "horoscopes", "cases": []}', encoding="utf-8")
    done = python_runner(path)
    assert done.returncode == 2 and "unknown format 'horoscopes'" in done.stderr


def _fresh(binary: Path, sources: list[Path]) -> bool:
    return binary.exists() and all(binary.stat().st_mtime >= s.stat().st_mtime for s in sources)


@pytest.fixture(scope="session")
def cpp_binaries(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The build directory holding the conformance binaries: `make test-cpp`'s when they are
    up to date, else configured and built here (policy and bundle binaries need no SDK)."""
    sources = [
        *(CPP_SRC / "include").rglob("*.h"),
        *(CPP_SRC / "tests").glob("*.cpp"),
        *(CPP_SRC / "runner").glob("bundle*"),
        CPP_SRC / "runner" / "errors.h",
    ]
    made = CPP_SRC / "build"
    if all(_fresh(made / b, sources) for b in SDK_ONLY):
        return made
    if shutil.which("cmake") is None or shutil.which("c++") is None:
        pytest.skip("cmake / a C++ compiler not installed (make sysdeps installs them)")
    build = tmp_path_factory.mktemp("cpp-conformance")
    for cmd in (
        ["cmake", "-S", str(CPP_SRC), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release"],
        ["cmake", "--build", str(build), "--target", *SDK_ONLY, "-j", "2"],
    ):
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stdout + done.stderr
    return build


@pytest.mark.slow
@pytest.mark.parametrize(
    ("file", "binary"),
    [
        ("mode_decision.json", "trt_edge_conformance"),
        ("bundle_layouts.json", "trt_edge_bundle_conformance"),
    ],
)
def test_cpp_passes_the_shared_vectors(cpp_binaries: Path, file: str, binary: str) -> None:
    done = subprocess.run(
        [str(cpp_binaries / binary), str(VECTORS / file)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "skipped" not in done.stdout, "built without OpenSSL: sha256 cases were skipped"
    assert done.stdout.strip().splitlines()[-1] == f"{cases_in(file)} passed, 0 failed"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("file", "binary"),
    [
        ("mode_decision.json", "trt_edge_conformance"),
        ("bundle_layouts.json", "trt_edge_bundle_conformance"),
    ],
)
def test_cpp_reports_a_wrong_expectation(
    cpp_binaries: Path, tmp_path: Path, file: str, binary: str
) -> None:
    path, name = wrong_expectation(tmp_path, file)
    done = subprocess.run([str(cpp_binaries / binary), str(path)], capture_output=True, text=True)
    assert done.returncode == 1
    assert f"FAIL {name}: expected" in done.stdout
