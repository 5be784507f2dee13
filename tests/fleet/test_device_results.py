"""How a device's JSON report (written by the rendered playbook) becomes a report row."""

from __future__ import annotations

import json
from pathlib import Path

from trt_edge.fleet.execute import device_result

LOG = Path("wave-1.log")


def status(version: str | None) -> str:
    return json.dumps({"version": version, "active": "A"})


def test_missing_report_means_unreachable() -> None:
    result = device_result("d", 1, None, LOG)
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
    result = device_result("d", 1, raw, LOG)
    assert (result.result, result.old_version, result.new_version) == ("updated", "1.0.0", "2.0.0")
    assert (result.install_seconds, result.health_seconds, result.seconds) == (1.5, 62.25, 90.5)


def test_health_failure_with_rollback_is_rolled_back_with_the_gate_reason() -> None:
    raw = {
        "failed": "True",
        "stage": "health",
        "health_stdout": json.dumps({"ok": False, "reason": "decode: 9 ms exceeds 1 ms"}),
        "rollback_rc": "0",
        "before": status("1.0.0"),
        "after": status("1.0.0"),
    }
    result = device_result("d", 2, raw, LOG)
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
    result = device_result("d", 2, raw, LOG)
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
    result = device_result("d", 1, raw, LOG)
    assert result.result == "failed"
    assert result.reason == (
        "install refused, previous model kept: trt-edge-device install: error: signed by key abc…"
    )
