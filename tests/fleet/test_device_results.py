"""How a device's JSON report (written by the rendered playbook) becomes a report row."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from trt_edge.fleet.execute import device_result, read_report
from trt_edge.fleet.report import DeviceReport, DeviceResult, decode_device_report
from trt_edge_runner.agent.health import HealthReport
from trt_edge_runner.schemas.source import SCHEMAS

LOG = Path("wave-1.log")
SOURCE = "wave-1-reports/d.json"


def status(version: str | None) -> str:
    """`status --json` as a device prints it (one line)."""
    slot = {"name": "m", "version": version, "bundle_sha256": "0" * 64, "installed_at": "now"}
    doc = {"active": "A", "previous": None, "version": version, "name": "m", "slots": {"A": slot}}
    return json.dumps(doc, sort_keys=True)


def failed_health(reason: str) -> str:
    """`health --json` of a device whose gate failed, as the device prints it."""
    settings = {"max_latency_regression": 0.2, "latency_budget_ms": 1.0, "latency_noise_ms": 0.5}
    report = HealthReport(False, "B", "m", "2.0.0", settings, reason=reason)
    return json.dumps(report.to_dict(), sort_keys=True)


def result_of(raw: dict[str, Any], wave: int = 1) -> DeviceResult:
    """The row for a device that wrote `raw` (`host` d), read as the rollout reads it."""
    report = decode_device_report(json.dumps({"host": "d", **raw}), SOURCE)
    return device_result("d", wave, report, log=LOG, source=SOURCE)


def test_missing_report_means_unreachable(tmp_path: Path) -> None:
    report = read_report(tmp_path / "d.json", decode_device_report)
    result = device_result("d", 1, report, log=LOG, source=SOURCE)
    assert result.result == "unreachable" and "wave-1.log" in result.reason


def test_successful_device_has_versions_and_timings() -> None:
    raw = {
        "failed": False,
        "stage": "done",
        "before": status("1.0.0"),
        "after": status("2.0.0"),
        "install_delta": "0:00:01.500000",
        "health_delta": "0:01:02.250000",
        "t0": "100.0",
        "t1": "190.5",
    }
    result = result_of(raw)
    assert (result.result, result.old_version, result.new_version) == ("updated", "1.0.0", "2.0.0")
    assert (result.install_seconds, result.health_seconds, result.seconds) == (1.5, 62.25, 90.5)


def test_health_failure_with_rollback_is_rolled_back_with_the_gate_reason() -> None:
    raw = {
        "failed": "True",
        "stage": "health",
        "health_stdout": failed_health("decode: 9 ms exceeds 1 ms"),
        "rollback_rc": "0",
        "before": status("1.0.0"),
        "after": status("1.0.0"),
    }
    result = result_of(raw, 2)
    assert result.result == "rolled_back"
    assert result.reason == "health gate failed: decode: 9 ms exceeds 1 ms"


def test_health_failure_whose_rollback_fails_is_failed() -> None:
    raw = {
        "failed": True,
        "stage": "health",
        "health_stdout": "",
        "health_stderr": "trt-edge-device health: FAILED: boom\n",
        "rollback_rc": "1",
        "rollback_stderr": "trt-edge-device rollback: error: nothing to roll back to\n",
    }
    result = result_of(raw, 2)
    assert result.result == "failed"
    assert "FAILED: boom" in result.reason and "nothing to roll back to" in result.reason


def test_refused_install_keeps_the_previous_model() -> None:
    raw = {
        "failed": True,
        "stage": "install",
        "install_stderr": (
            "warning\ntrt-edge-device install: error: signed by key abc…\n"
            "  hint: add its .pub to the keys directory\n"  # the error line is the reason
        ),
        "before": status("1.0.0"),
        "after": status("1.0.0"),
    }
    result = result_of(raw)
    assert result.result == "failed"
    assert result.reason == (
        "install refused, previous model kept: trt-edge-device install: error: signed by key abc…"
    )


def test_a_report_that_is_not_one_fails_the_device_naming_file_and_field(tmp_path: Path) -> None:
    path = tmp_path / "d.json"
    path.write_text(json.dumps({"host": "d", "stage": "done", "failed": "maybe"}))
    report = read_report(path, decode_device_report)
    result = device_result("d", 1, report, log=LOG, source=str(path))
    assert result.result == "failed"
    assert result.reason.startswith(f"report refused: {path}: failed: ")


def test_unreadable_status_leaves_the_version_unknown_and_says_so() -> None:
    result = result_of({"failed": False, "stage": "done", "after": '{"version": 2}'})
    assert (result.result, result.new_version) == ("updated", None)
    assert result.reason.startswith(f"unreadable status: {SOURCE}: after: ")


def test_health_failure_names_an_unreadable_health_document() -> None:
    raw = {"failed": True, "stage": "health", "health_stdout": '{"ok": false}', "rollback_rc": 0}
    result = result_of(raw)
    assert result.result == "rolled_back"
    assert result.reason.startswith(f"health gate failed: {SOURCE}: health_stdout: ")


def test_health_that_could_not_judge_reports_the_command_error() -> None:
    error = {"ok": False, "error": "nothing installed", "type": "AgentError", "exit_code": 2}
    raw = {"failed": True, "stage": "health", "health_stdout": json.dumps(error)}
    result = result_of({**raw, "rollback_rc": "-1"})
    assert result.result == "failed"
    assert result.reason == "health gate failed: nothing installed; rollback failed: "


def test_every_field_the_report_schema_declares_is_a_field_of_the_report() -> None:
    """The decoder reads the text fields from the schema: a field added there must have its
    place in `DeviceReport`, or every report would fail to decode."""
    declared = set(SCHEMAS["fleet-device-report"]["properties"])
    assert declared == {f.name for f in dataclasses.fields(DeviceReport)}
