"""The shared vector files beyond profile selection — mode decision, bundle layouts, dtypes —
run through both implementations (the Python conformance module and the C++ binaries built
from device_runner/cpp), each file checked against its readable generator, and each runner
shown to fail on a wrong expectation (so a pass means something). The C++ dtype check needs
the ExecuTorch SDK and lives with the runner tests (tests/runner/test_dtypes.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.paths import VECTORS
from tests.policy.vector_runs import cpp_runner, python_runner


def cases_in(name: str) -> int:
    doc = json.loads((VECTORS / name).read_text(encoding="utf-8"))
    return len(doc.get("cases", doc.get("dtypes", [])))


@pytest.mark.parametrize(
    "source",
    [
        "generate_profile_selection",
        "generate_mode_decision",
        "generate_bundle_layouts",
        "generate_dtypes",
        "generate_bundle_documents",
    ],
)
def test_vector_file_is_what_its_generator_writes(source: str) -> None:
    done = subprocess.run(
        [sys.executable, str(VECTORS / f"{source}.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "up to date" in done.stdout


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


@pytest.mark.slow
@pytest.mark.parametrize(
    ("file", "binary"),
    [
        ("mode_decision.json", "trt_edge_conformance"),
        ("bundle_layouts.json", "trt_edge_bundle_conformance"),
    ],
)
def test_cpp_passes_the_shared_vectors(cpp_vector_build: Path, file: str, binary: str) -> None:
    done = cpp_runner(cpp_vector_build / binary, VECTORS / file)
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
    cpp_vector_build: Path, tmp_path: Path, file: str, binary: str
) -> None:
    path, name = wrong_expectation(tmp_path, file)
    done = cpp_runner(cpp_vector_build / binary, path)
    assert done.returncode == 1
    assert f"FAIL {name}: expected" in done.stdout


@pytest.mark.slow
def test_cpp_reader_reaches_each_bundle_documents_verdict(cpp_vector_build: Path) -> None:
    """The C++ bundle reader on every bundle.json vector: the verdict, and for a refusal
    the field, that tests/runner/test_schemas.py asks of the Python reader."""
    binary = cpp_vector_build / "trt_edge_bundle_document_conformance"
    done = cpp_runner(binary, VECTORS / "bundle_documents.json")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip().splitlines()[-1] == (
        f"{cases_in('bundle_documents.json')} passed, 0 failed"
    )


@pytest.mark.slow
def test_cpp_bundle_documents_runner_reports_a_wrong_field(
    cpp_vector_build: Path, tmp_path: Path
) -> None:
    doc = json.loads((VECTORS / "bundle_documents.json").read_text(encoding="utf-8"))
    refused = next(c for c in doc["cases"] if not c["valid"])
    refused["field"] = "not.the.field"
    path = tmp_path / "bundle_documents.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    done = cpp_runner(cpp_vector_build / "trt_edge_bundle_document_conformance", path)
    assert done.returncode == 1
    assert f"FAIL {refused['name']}: expected a refusal naming 'bundle.json: not.the.field: '" in (
        done.stdout
    )
