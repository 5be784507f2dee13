"""`trt-edge build` as a user runs it: exit codes 0/1/2, one message, never a traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from trt_edge.pipeline.stages import STAGE_NAMES

WriteProject = Callable[..., Path]
TRT_EDGE = [sys.executable, "-m", "trt_edge"]


def _run(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*TRT_EDGE, "build", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=900,
    )


def test_help_does_not_import_torch() -> None:
    code = (
        "import sys\n"
        "from trt_edge.cli.main import main\n"
        "try:\n"
        "    main(['build', '--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "assert 'torch' not in sys.modules and 'executorch' not in sys.modules, 'heavy import'\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "--no-cache" in done.stdout and "--backend" in done.stdout


def test_missing_manifest_is_a_usage_error(tmp_path: Path) -> None:
    done = _run(tmp_path / "nope.yaml")
    assert done.returncode == 2
    assert "no such manifest file" in done.stderr
    assert "Traceback" not in done.stderr


def test_invalid_manifest_reports_located_diagnostics(
    write_project: WriteProject, tmp_path: Path
) -> None:
    path = write_project()
    path.write_text(path.read_text().replace("policy: pinned", "policy: sometimes"))
    done = _run(path, "--out", tmp_path / "out")
    assert done.returncode == 2
    assert f"{path}:" in done.stderr and "runtime.policy" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_missing_entrypoint_function_exits_2_naming_the_line(
    write_project: WriteProject, tmp_path: Path
) -> None:
    path = write_project(entrypoint="model.py:missing")
    done = _run(path, "--out", tmp_path / "out", "--cache-dir", tmp_path / "cache")
    assert done.returncode == 2
    assert f"{path}:5:" in done.stderr and "has no function 'missing'" in done.stderr
    assert "Traceback" not in done.stderr


def test_unavailable_tensorrt_backend_exits_2_with_one_message(
    write_project: WriteProject, tmp_path: Path
) -> None:
    pytest.importorskip("trt_edge")  # always present; keeps the intent readable
    done = _run(write_project(), "--backend", "tensorrt", "--out", tmp_path / "out")
    assert done.returncode == 2
    assert "backend 'tensorrt' cannot run here" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.slow
def test_successful_build_prints_a_summary_and_json_logs(
    write_project: WriteProject, tmp_path: Path
) -> None:
    path = write_project()
    done = _run(
        path,
        "--local",
        "--out",
        tmp_path / "out",
        "--cache-dir",
        tmp_path / "cache",
        "--log-format",
        "json",
        "--source-date-epoch",
        "1700000000",
    )
    assert done.returncode == 0, done.stderr
    bundle = tmp_path / "out" / "small-1.0.0"
    assert (bundle / "bundle.json").is_file()
    assert "build summary" in done.stdout and str(bundle) in done.stdout
    assert "profile 1 many" in done.stdout
    events = [json.loads(line) for line in done.stderr.splitlines() if line.startswith("{")]
    finished = [e["stage"] for e in events if e.get("event") == "stage_finished"]
    assert finished == list(STAGE_NAMES)


def test_directory_as_manifest_suggests_its_manifest_yaml(
    write_project: WriteProject, tmp_path: Path
) -> None:
    path = write_project()
    done = _run(path.parent, "--out", tmp_path / "out")
    assert done.returncode == 2
    assert f"trt-edge build: error: {path.parent}: is a directory\n" in done.stderr
    assert f"  hint: did you mean {path}?" in done.stderr
    assert "no such manifest file" not in done.stderr and "Traceback" not in done.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    done = _run(empty, "--out", tmp_path / "out")
    assert done.returncode == 2
    assert f"trt-edge build: error: {empty}: is a directory\n" in done.stderr
    assert f"  hint: pass {empty / 'manifest.yaml'} (the manifest file itself)" in done.stderr


def test_out_that_is_a_file_fails_before_any_export(
    write_project: WriteProject, tmp_path: Path
) -> None:
    path = write_project()
    in_the_way = tmp_path / "out"
    in_the_way.write_text("keep me")
    cache = tmp_path / "cache"
    done = _run(path, "--local", "--out", in_the_way, "--cache-dir", cache)
    assert done.returncode == 2, done.stderr
    assert f"--out {in_the_way}: exists and is not a directory" in done.stderr
    assert "Traceback" not in done.stderr
    nested = in_the_way / "bundles"
    done = _run(path, "--local", "--out", nested, "--cache-dir", cache)
    assert done.returncode == 2
    assert f"--out {nested}: cannot be created because {in_the_way} is not a directory" in (
        done.stderr
    )
    assert in_the_way.read_text() == "keep me"
    assert not cache.exists() or not any(cache.rglob("*"))  # nothing was exported or lowered


def test_pipeline_checks_out_dir_before_loading(
    write_project: WriteProject, tmp_path: Path
) -> None:
    from trt_edge.pipeline.errors import OutputDirError
    from trt_edge.pipeline.run import BuildOptions, build

    path = write_project()
    path.write_text("not: [a valid manifest")  # loading would fail with a different error
    in_the_way = tmp_path / "out"
    in_the_way.write_text("")
    cache = tmp_path / "cache"
    with pytest.raises(OutputDirError) as caught:
        build(path, BuildOptions(out_dir=in_the_way, cache_dir=cache))
    assert caught.value.exit_code == 2 and "exists and is not a directory" in str(caught.value)
    assert not cache.exists() or not any(cache.rglob("*"))
