"""Both conformance runners (Python module, C++ binary) on the shared and on broken vectors,
and a differential run: random tables, Python's answers as expectations, C++ must agree."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from trt_edge_runner.policy import ProfileBounds, ProfileTable, Request, select_profile

from tests.helpers.paths import VECTORS
from tests.policy.vector_runs import cpp_runner, python_runner

SELECTION = VECTORS / "profile_selection.json"


def doc() -> dict[str, Any]:
    return json.loads(SELECTION.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def write(tmp_path: Path, content: dict[str, Any] | str, name: str = "v.json") -> Path:
    path = tmp_path / name
    path.write_text(content if isinstance(content, str) else json.dumps(content), "utf-8")
    return path


def flipped(tmp_path: Path) -> tuple[Path, str]:
    """The project vectors with one expectation made wrong on purpose."""
    d = doc()
    victim = next(c for c in d["cases"] if c["expect"]["outcome"] == "ok")
    victim["expect"]["profile"] += 1
    return write(tmp_path, d), victim["name"]


BROKEN: dict[str, tuple[Any, str]] = {
    "not json": ("{cases: nope", "not JSON"),
    "no cases": ({"tests": []}, "missing 'cases'"),
    "missing expect": (
        {
            "cases": [
                {"name": "x", "table": {"bounds": []}, "request": {"kind": "auto"}, "inputs": []}
            ]
        },
        "missing 'expect'",
    ),
    "bad kind": (
        {
            "cases": [
                {
                    "name": "x",
                    "table": {"bounds": []},
                    "request": {"kind": "sometimes"},
                    "inputs": [],
                    "expect": {"outcome": "no_profile_matches_inputs"},
                }
            ]
        },
        "request.kind",
    ),
    "profile on a failure": (
        {
            "cases": [
                {
                    "name": "x",
                    "table": {"bounds": []},
                    "request": {"kind": "auto"},
                    "inputs": [],
                    "expect": {"outcome": "no_profile_matches_inputs", "profile": 0},
                }
            ]
        },
        "'profile' must be present exactly when",
    ),
}


def expected_summary() -> str:
    return f"{len(doc()['cases'])} passed, 0 failed"


def test_python_runner_passes_the_project_vectors() -> None:
    done = python_runner(SELECTION)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip().splitlines()[-1] == expected_summary()


def test_python_runner_reports_a_failing_case(tmp_path: Path) -> None:
    path, name = flipped(tmp_path)
    done = python_runner(path)
    assert done.returncode == 1
    assert f"FAIL {name}: expected ok (profile" in done.stdout
    total = len(doc()["cases"])
    assert done.stdout.strip().splitlines()[-1] == f"{total - 1} passed, 1 failed"


@pytest.mark.parametrize("kind", sorted(BROKEN))
def test_python_runner_rejects_malformed_files(tmp_path: Path, kind: str) -> None:
    content, needle = BROKEN[kind]
    path = write(tmp_path, content)
    done = python_runner(path)
    assert done.returncode == 2
    assert str(path) in done.stderr and needle in done.stderr
    assert "Traceback" not in done.stderr


def test_python_runner_missing_file(tmp_path: Path) -> None:
    done = python_runner(tmp_path / "absent.json")
    assert done.returncode == 2
    assert "cannot read" in done.stderr


@pytest.mark.slow
def test_cpp_runner_passes_the_project_vectors(cpp_conformance: Path) -> None:
    done = cpp_runner(cpp_conformance, SELECTION)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip().splitlines()[-1] == expected_summary()


@pytest.mark.slow
def test_cpp_runner_reports_a_failing_case(cpp_conformance: Path, tmp_path: Path) -> None:
    path, name = flipped(tmp_path)
    done = cpp_runner(cpp_conformance, path)
    assert done.returncode == 1
    assert f"FAIL {name}: expected ok (profile" in done.stdout


@pytest.mark.slow
@pytest.mark.parametrize("kind", sorted(BROKEN))
def test_cpp_runner_rejects_malformed_files(
    cpp_conformance: Path, tmp_path: Path, kind: str
) -> None:
    content, needle = BROKEN[kind]
    path = write(tmp_path, content)
    done = cpp_runner(cpp_conformance, path)
    assert done.returncode == 2
    assert str(path) in done.stderr and needle.split(" ")[0] in done.stderr


def random_case(rng: random.Random, i: int) -> dict[str, Any]:
    """A random (sometimes malformed) table, request and inputs; expectation from Python."""

    def shape(rank: int) -> list[int]:
        return [rng.randint(-1, 9) for _ in range(rank)]

    n_inputs = rng.randint(0, 3)
    rows = []
    for _ in range(rng.randint(0, 4)):
        row = []
        for _ in range(max(0, n_inputs + rng.choice([-1, 0, 0, 0, 1]))):
            rank = rng.randint(0, 3)
            lo = shape(rank)
            hi = [a + rng.randint(0, 5) for a in lo] if rng.random() < 0.85 else shape(rank + 1)
            row.append({"min": lo, "max": hi})
        rows.append(row)
    active = rng.randint(-1, 4)
    inputs = [shape(rng.randint(0, 3)) for _ in range(n_inputs)]
    kind = rng.choice(["default", "pinned", "auto", "auto"])
    request: dict[str, Any] = {"kind": kind}
    req = Request.auto() if kind == "auto" else Request.default()
    if kind == "pinned":
        request["index"] = rng.randint(-2, 4)
        req = Request.pinned(request["index"])
    table = ProfileTable(
        tuple(tuple(ProfileBounds(tuple(b["min"]), tuple(b["max"])) for b in r) for r in rows),
        active,
    )
    got = select_profile(table, req, [tuple(s) for s in inputs])
    expect: dict[str, Any] = {"outcome": got.outcome.value}
    if got.profile is not None:
        expect["profile"] = got.profile
    return {
        "name": f"random {i}",
        "table": {"bounds": rows, "active": active},
        "request": request,
        "inputs": inputs,
        "expect": expect,
    }


@pytest.mark.slow
def test_cpp_agrees_with_python_on_random_tables(cpp_conformance: Path, tmp_path: Path) -> None:
    rng = random.Random(20261130)
    cases = [random_case(rng, i) for i in range(3000)]
    outcomes = {c["expect"]["outcome"] for c in cases}
    assert len(outcomes) == 4  # the sample exercises every outcome
    path = write(tmp_path, {"cases": cases})
    done = cpp_runner(cpp_conformance, path)
    assert done.returncode == 0, done.stdout[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "3000 passed, 0 failed"
