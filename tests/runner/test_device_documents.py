"""The device side's own documents are declared once and read one way (issue 30, part 4).

For each of `runner.json`, `state.json`, `device.json`, `facts.json`, `status --json`,
`health --json` (and the `--json` error document) and the fleet's three per-device reports:
what its writer writes validates against its schema and decodes to the typed value, and a
broken one is refused by its one decode function with the project's error naming the file
and the field — never a traceback.
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest
from trt_edge.fleet.errors import RolloutError
from trt_edge.fleet.playbook import REPORT_VARS, render_metrics_playbook, render_rollback_playbook
from trt_edge.fleet.report import (
    decode_device_report,
    decode_metrics_report,
    decode_rollback_report,
)
from trt_edge_runner.agent.config import (
    DeviceConfig,
    HealthSettings,
    RunnerSettings,
    decode_device_config,
)
from trt_edge_runner.agent.errors import AgentConfigError, NothingInstalled
from trt_edge_runner.agent.facts import decode_facts, detect_facts
from trt_edge_runner.agent.health import HealthReport, PhaseHealth, decode_health
from trt_edge_runner.agent.reports import CommandFailure, DeviceStatus, decode_status
from trt_edge_runner.agent.store import AgentState, Event, Floor, SlotInfo, decode_state
from trt_edge_runner.runner_info import decode_runner_info
from trt_edge_runner.schemas import DocumentError, check
from trt_edge_runner.schemas.source import SCHEMAS
from trt_edge_runner.trust_record import TrustRecord

from tests.helpers.paths import REPO

SHA = "ab" * 32


def _state() -> AgentState:
    info = SlotInfo(
        "tiny", "1.2.0", SHA, "2026-01-01T00:00:00Z", {"decode": 1.5}, "key-1", {"decode": 0.2}
    )
    return AgentState(
        active="A",
        previous=None,
        slots={"A": info, "B": None},
        floors={"tiny": Floor("1.2.0", SHA)},
        history=(Event("2026-01-01T00:00:00Z", "install", "slot A", "tiny", "1.2.0"),),
        trust=TrustRecord(revocations_version=3, revoked={"key-0": "lost"}),
    )


def test_state_json_as_written_decodes_to_the_same_state() -> None:
    state = _state()
    assert check("agent-state", json.loads(state.to_json())) is None
    assert decode_state(state.to_json(), "state.json") == state
    assert decode_state(AgentState().to_json(), "state.json") == AgentState()


def test_a_schema_1_state_is_still_read() -> None:
    slot = json.loads(_state().to_json())["slots"]["A"]
    doc = {"active": "A", "previous": None, "slots": {"A": slot}}
    state = decode_state(json.dumps(doc).encode(), "state.json")
    assert state.floors == {"tiny": Floor("1.2.0", SHA)} and state.history == ()


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        (lambda d: d["slots"]["A"].pop("bundle_sha256"), "slots.A.bundle_sha256: missing"),
        (lambda d: d["slots"]["A"].update(extra=1), "slots.A.extra: unknown field"),
        (lambda d: d.update(active="C"), "active: expected one of ['A', 'B']"),
        (lambda d: d.pop("floors"), "floors: missing"),
        (lambda d: d["history"][0].update(at=3), "history[0].at: expected string"),
    ],
)
def test_a_broken_state_json_names_the_file_and_the_field(edit: Any, field: str) -> None:
    doc = json.loads(_state().to_json())
    edit(doc)
    with pytest.raises(AgentConfigError) as refused:
        decode_state(json.dumps(doc).encode(), "/var/lib/trt-edge/state.json")
    assert str(refused.value).startswith(f"/var/lib/trt-edge/state.json: {field}")
    assert "restore it or reinstall" in (refused.value.hint or "")


def test_a_schema_2_state_without_baseline_spreads_is_still_read() -> None:
    doc = json.loads(_state().to_json())
    assert doc["schema"] == 3
    doc["schema"] = 2
    del doc["slots"]["A"]["baseline_spread_ms"]
    info = decode_state(json.dumps(doc).encode(), "state.json").slots["A"]
    assert info is not None and info.baseline_ms == {"decode": 1.5}
    assert info.baseline_spread_ms == {}


def test_a_newer_state_schema_is_refused_before_its_shape() -> None:
    with pytest.raises(AgentConfigError, match="schema 4 is newer than this agent reads"):
        decode_state(b'{"schema": 4}', "state.json")


def test_device_json_as_documented_decodes(tmp_path: Path) -> None:
    path = tmp_path / "device.json"
    doc = {
        "health": {
            "max_latency_regression": 0.5,
            "latency_budget_ms": 40,
            "latency_noise_ms": None,
            "latency_spread_factor": 2,
        },
        "runner": "/opt/trt-edge/runner/bin/trt-edge-run",
        "runner_timeout_s": 600,
        "engine": "cpp",
        "an operator's note": "kept, ignored",
    }
    path.write_text(json.dumps(doc))
    assert decode_device_config(path) == DeviceConfig(
        HealthSettings(0.5, 40.0, 1.0, 2.0),
        RunnerSettings("cpp", "/opt/trt-edge/runner/bin/trt-edge-run", 600.0),
    )
    assert decode_device_config(tmp_path / "absent.json") == DeviceConfig()


@pytest.mark.parametrize(
    ("doc", "field"),
    [
        ({"health": {"latency_budget_ms": "fast"}}, "health.latency_budget_ms"),
        ({"health": {"max_latency_regression": -1}}, "health.max_latency_regression"),
        ({"health": {"latency_spread_factor": "3x"}}, "health.latency_spread_factor"),
        ({"engine": "gpu"}, "engine"),
        ({"runner": ""}, "runner"),
        ({"runner_timeout_s": 0}, "runner_timeout_s"),
        ({"runner_timeout_s": True}, "runner_timeout_s"),
    ],
)
def test_a_broken_device_json_names_the_file_and_the_field(
    tmp_path: Path, doc: dict[str, Any], field: str
) -> None:
    path = tmp_path / "device.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(AgentConfigError) as refused:
        decode_device_config(path)
    assert str(refused.value).startswith(f"{path}: {field}: ")


def test_facts_json_overrides_decode_as_strings(tmp_path: Path) -> None:
    path = tmp_path / "facts.json"
    path.write_text(json.dumps({"arch": "aarch64", "sm": 8.7, "cuda": None}))
    assert decode_facts(path) == {"arch": "aarch64", "sm": "8.7", "cuda": None}
    assert check("device-facts", detect_facts()) is None
    path.write_text(json.dumps({"sm": ["8.7"]}))
    with pytest.raises(AgentConfigError, match=rf"^{path}: sm: expected string or number"):
        decode_facts(path)
    path.write_text("[]")
    with pytest.raises(AgentConfigError, match=rf"^{path}: device facts must be a JSON object"):
        decode_facts(path)


def _status() -> DeviceStatus:
    state = _state()
    return DeviceStatus(
        active="A",
        previous=None,
        version="1.2.0",
        name="tiny",
        slots=dict(state.slots),
        facts={"arch": "aarch64", "sm": None},
        recovered=("pointed current at slots/A",),
        floors=dict(state.floors),
        history=state.history,
    )


def test_status_json_as_written_decodes_to_the_same_status() -> None:
    text = json.dumps(_status().to_dict(), sort_keys=True)
    assert check("device-status", json.loads(text)) is None
    assert decode_status(text, "status") == _status()


def test_an_older_or_newer_devices_status_is_read() -> None:
    doc = _status().to_dict()
    for key in ("floors", "history", "recovered", "facts", "previous_version"):
        del doc[key]
    doc["slots"]["A"]["added_later"] = True
    status = decode_status(json.dumps(doc), "status")
    assert status.version == "1.2.0" and status.slots["A"] == _state().slots["A"]


def test_a_broken_status_json_names_the_source_and_the_field() -> None:
    doc = _status().to_dict()
    doc["slots"]["A"]["version"] = 2
    with pytest.raises(DocumentError) as refused:
        decode_status(json.dumps(doc), "web-1.json: before")
    assert str(refused.value) == "web-1.json: before: slots.A.version: expected string, got 2"
    assert refused.value.field == "slots.A.version"


def _health() -> HealthReport:
    return HealthReport(
        ok=False,
        slot="A",
        name="tiny",
        version="1.2.0",
        settings=asdict(HealthSettings()),
        phases=[
            PhaseHealth("decode", False, 9.0, 1.0, "median 9 ms is 800% slower", 15, 0.3, 0.1),
            PhaseHealth("prefill", True, 2.0, 1.5, "median 2 ms is within", 15, 0.1, 0.1),
            PhaseHealth("vision", True, 0.1, 0.1, "within", 15, 0.0, None, 1.0, 1.1, "floor"),
            PhaseHealth("p", True, None, None),
        ],
        reason="decode: 9 ms exceeds 1 ms",
        engine="cpp",
    )


def test_health_json_as_written_decodes_to_the_same_report() -> None:
    text = json.dumps(_health().to_dict(), sort_keys=True)
    assert check("device-health", json.loads(text)) is None
    assert decode_health(text, "health") == _health()


def test_health_json_of_a_device_before_latency_spreads_decodes() -> None:
    """What an older device prints: no spread factor, no per-phase judgement figures."""
    doc = _health().to_dict()
    del doc["settings"]["latency_spread_factor"]
    doc["phases"] = [
        {k: p[k] for k in ("phase", "ok", "latency_ms", "baseline_ms")} for p in doc["phases"]
    ]
    report = decode_health(json.dumps(doc), "health")
    assert isinstance(report, HealthReport) and "latency_spread_factor" not in report.settings
    assert report.phases[0] == PhaseHealth("decode", False, 9.0, 1.0)


def test_health_json_that_is_the_commands_error_document_decodes_as_a_failure() -> None:
    error = NothingInstalled("/var/lib/trt-edge: no bundle is installed on this device")
    failure = decode_health(json.dumps(error.to_dict()), "health")
    assert failure == CommandFailure(str(error), "NothingInstalled", 1)


def test_a_broken_health_json_names_the_source_and_the_field() -> None:
    doc = _health().to_dict()
    del doc["phases"][0]["latency_ms"]
    with pytest.raises(DocumentError, match=r"^health: phases\[0\]\.latency_ms: missing$"):
        decode_health(json.dumps(doc), "health")
    with pytest.raises(DocumentError, match=r"^health:1:1: not valid JSON"):
        decode_health("garbage", "health")


def _runner_json() -> str:
    sys.path.insert(0, str(REPO / "device_runner" / "cpp" / "tools"))
    try:
        from build_device_tarball import RunnerInfo
    finally:
        sys.path.pop(0)
    return RunnerInfo(
        version="0.9.0",
        arch="aarch64",
        executorch="1.0.0",
        system_libraries=("libc.so.6",),
        symbol_versions={"GLIBC": "2.35"},
        files={"bin/trt-edge-run": SHA, "lib/libexecutorch.so": SHA},
    ).to_json()


def test_runner_json_as_the_tarball_build_writes_it_decodes() -> None:
    text = _runner_json()
    assert check("runner-tarball", json.loads(text)) is None
    info = decode_runner_info(text, "runner.json")
    assert (info.name, info.version, info.arch) == ("trt-edge-runner", "0.9.0", "aarch64")
    assert info.files["bin/trt-edge-run"] == SHA and info.system_libraries == ("libc.so.6",)


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        (lambda d: d["files"].pop("bin/trt-edge-run"), "files.bin/trt-edge-run: missing"),
        (lambda d: d.update(name="other"), "name: expected 'trt-edge-runner'"),
        (lambda d: d["files"].update({"lib/x.so": "nothex"}), "files.lib/x.so: must match"),
        (lambda d: d.pop("arch"), "arch: missing"),
    ],
)
def test_a_broken_runner_json_names_the_file_and_the_field(edit: Any, field: str) -> None:
    doc = json.loads(_runner_json())
    edit(doc)
    with pytest.raises(DocumentError) as refused:
        decode_runner_info(json.dumps(doc), "t.tar.gz:runner.json")
    assert str(refused.value).startswith(f"t.tar.gz:runner.json: {field}")


def _rendered(template: dict[str, str], native: bool) -> dict[str, Any]:
    """What Ansible copies back for `template`: every value rendered, as a string or (newer
    Ansible) with its native type."""
    values: dict[str, Any] = {key: "" for key in template}
    values.update(host="web-1", stage="done", url="http://127.0.0.1:8000/metrics")
    typed = {"failed": False, "rollback_rc": -1, "t0": 100.0, "t1": 190.5}
    typed.update(status_0=200, status_1=200)
    for key, value in typed.items():
        if key in template:
            values[key] = value if native else str(value)
    return values


def _report_vars(play: list[dict[str, Any]]) -> dict[str, str]:
    report: dict[str, str] = play[0]["tasks"][-1]["vars"]["trt_edge_report"]
    return report


@pytest.mark.parametrize("native", [True, False])
def test_the_fleets_reports_as_the_playbooks_write_them_decode(native: bool) -> None:
    wave = decode_device_report(json.dumps(_rendered(REPORT_VARS, native)), "web-1.json")
    assert (wave.host, wave.failed, wave.rollback_rc, wave.t1) == ("web-1", False, -1, 190.5)
    rollback = _rendered(_report_vars(render_rollback_playbook()), native)
    assert decode_rollback_report(json.dumps(rollback), "web-1.json").rollback_rc == -1
    metrics = _rendered(_report_vars(render_metrics_playbook()), native)
    assert decode_metrics_report(json.dumps(metrics), "web-1.json").status == (200, 200)


def test_every_key_a_playbook_reports_is_declared() -> None:
    for name, template in (
        ("fleet-device-report", REPORT_VARS),
        ("fleet-rollback-report", _report_vars(render_rollback_playbook())),
        ("fleet-metrics-report", _report_vars(render_metrics_playbook())),
    ):
        assert set(template) == set(SCHEMAS[name]["properties"]), name


def test_failed_is_read_in_either_spelling_and_a_broken_report_names_the_field() -> None:
    doc = _rendered(REPORT_VARS, native=False)
    doc["failed"] = "True"
    assert decode_device_report(json.dumps(doc), "web-1.json").failed is True
    doc["failed"] = "maybe"
    with pytest.raises(RolloutError) as refused:
        decode_device_report(json.dumps(doc), "wave-1-reports/web-1.json")
    assert str(refused.value).startswith("wave-1-reports/web-1.json: failed: expected one of")
    assert refused.value.exit_code == 1
    with pytest.raises(RolloutError, match=r"^web-1.json: rollback_rc: missing"):
        decode_rollback_report('{"host": "web-1"}', "web-1.json")
