"""The typed build event stream: its lines, its reader, and what the container host rebuilds
from it (a `BuildResult` that no log line's name can change)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from trt_edge.containers.build_runner import _EventState, _handle_line
from trt_edge.containers.errors import ContainerBuildError
from trt_edge.pipeline import events
from trt_edge.pipeline.events import (
    BackendChosen,
    BuildFailed,
    BuildWarning,
    BundleWritten,
    EventStreamError,
    JsonLinesSink,
    StageFinished,
    StageStarted,
)
from trt_edge.pipeline.run import BuildOptions, build
from trt_edge.pipeline.stages import STAGE_NAMES

WriteProject = Callable[..., Path]
BUILD_COMMAND = [sys.executable, "-m", "trt_edge", "build"]
SAMPLES = (
    StageStarted("export"),
    StageFinished("lower", 1.25, True),
    BackendChosen("xnnpack", "manifest", "plain", "cpu-x86_64"),
    BuildWarning("cache_corrupt", "stage cache: entry rebuilt"),
    BundleWritten("/out/m-1", "m"),
    BuildFailed("trt-edge build: error: boom", "fix it", 2),
)


@pytest.mark.parametrize("event", SAMPLES, ids=lambda e: e.TYPE)
def test_every_event_type_round_trips_through_one_json_line(event: events.BuildEvent) -> None:
    line = events.to_json(event)
    assert "\n" not in line
    body = json.loads(line)
    assert (body["schema"], body["version"], body["type"]) == (
        events.SCHEMA,
        events.VERSION,
        event.TYPE,
    )
    assert events.from_json(line) == event


def test_the_reader_skips_other_output_and_unknown_types_and_refuses_other_versions() -> None:
    assert events.from_json("plain text") is None
    assert events.from_json('{"event": "stage_finished", "stage": "x", "seconds": 1}') is None
    newer_type = {"schema": events.SCHEMA, "version": events.VERSION, "type": "coffee"}
    assert events.from_json(json.dumps(newer_type)) is None
    extra_field = json.loads(events.to_json(SAMPLES[1])) | {"added_later": 1}
    assert events.from_json(json.dumps(extra_field)) == SAMPLES[1]
    with pytest.raises(EventStreamError, match="version 2"):
        events.from_json(json.dumps(newer_type | {"version": 2}))
    missing = json.loads(events.to_json(SAMPLES[1]))
    del missing["cached"]
    with pytest.raises(EventStreamError, match="cached"):
        events.from_json(json.dumps(missing))
    mistyped = json.loads(events.to_json(SAMPLES[1])) | {"seconds": "fast"}
    with pytest.raises(EventStreamError, match="seconds"):
        events.from_json(json.dumps(mistyped))


def test_the_container_host_refuses_a_stream_of_another_version() -> None:
    line = json.dumps({"schema": events.SCHEMA, "version": 99, "type": "stage_started"})
    options = BuildOptions(out_dir=Path("unused"))
    with pytest.raises(ContainerBuildError, match="another build event protocol"):
        _handle_line(line, _EventState(), options, lambda _: None)


def test_renaming_log_lines_does_not_change_what_the_host_rebuilds(
    write_project: WriteProject, tmp_path: Path
) -> None:
    """A real build's stream, read by the container host with log lines interleaved that
    carry the very names the old log parser read: the host's result follows the events."""
    stream = io.StringIO()
    result = build(
        write_project(),
        BuildOptions(
            out_dir=tmp_path / "out",
            cache_dir=tmp_path / "cache",
            source_date_epoch=1_700_000_000,
            events=[JsonLinesSink(stream)],
        ),
    )
    lines = stream.getvalue().splitlines()
    kinds = [json.loads(line)["type"] for line in lines]
    assert kinds[0] == "stage_started" and kinds[-1] == "bundle_written"
    assert kinds.count("stage_finished") == len(STAGE_NAMES) and "backend_chosen" in kinds
    misleading = [
        json.dumps({"event": "stage_finished", "stage": "lower", "seconds": 99.0}),
        json.dumps({"event": "backend_chosen", "backend": "tensorrt", "reason": "renamed"}),
        "trt-edge build: error: a log line that looks like an error",
    ]
    state = _EventState()
    seen: list[events.BuildEvent] = []
    options = BuildOptions(out_dir=tmp_path / "unused", events=[seen.append])
    for line in lines:
        for noise in misleading:
            _handle_line(noise, state, options, lambda _: None)
        _handle_line(line, state, options, lambda _: None)
    assert state.stage_seconds == pytest.approx(result.stage_seconds)
    assert state.cached == result.cached
    assert (state.backend, state.backend_reason) == (result.backend, result.backend_reason)
    assert state.failure == ""  # the look-alike error line is not the build's error
    assert seen == [events.from_json(line) for line in lines]  # the display saw them all


def test_cli_writes_the_event_stream_and_plain_lines_when_not_a_tty(
    write_project: WriteProject, tmp_path: Path
) -> None:
    path = write_project()
    stream = tmp_path / "events.jsonl"
    args = ["--local", "--out", tmp_path / "out", "--cache-dir", tmp_path / "cache"]
    done = subprocess.run(
        [*BUILD_COMMAND, str(path), *map(str, args), "--events", str(stream)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr
    read = list(events.read_events(stream.read_text().splitlines()))
    finished = [e.stage for e in read if isinstance(e, StageFinished)]
    assert finished == list(STAGE_NAMES)
    assert isinstance(read[-1], BundleWritten) and read[-1].path.endswith("small-1.0.0")
    # Not a TTY: one plain line per stage, no structured log lines.
    plain = [line.split(":")[0] for line in done.stderr.splitlines() if line.endswith(" s")]
    assert plain == list(STAGE_NAMES)
    assert "stage_finished" not in done.stderr


def test_a_failed_build_ends_its_stream_with_the_error(
    write_project: WriteProject, tmp_path: Path
) -> None:
    path = write_project(entrypoint="model.py:missing")
    stream = tmp_path / "events.jsonl"
    done = subprocess.run(
        [
            *BUILD_COMMAND,
            str(path),
            "--local",
            "--out",
            str(tmp_path / "out"),
            "--events",
            str(stream),
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 2
    last = list(events.read_events(stream.read_text().splitlines()))[-1]
    assert isinstance(last, BuildFailed) and last.exit_code == 2
    assert "missing" in last.message and last.message in done.stderr
