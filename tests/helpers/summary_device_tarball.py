"""Prints, at the end of a test session, the aarch64-vs-x86_64 output differences that
tests/device_tarball/test_outputs.py records (`record_property`).

A plugin loaded at start-up (tests/conftest.py) rather than a conftest beside the
tests: under pytest-xdist the controller, which writes the summary, never loads
the conftest files of test directories; the workers' reports still carry the
recorded properties to it.
"""

from __future__ import annotations

import pytest

PROPERTY = "aarch64_vs_x86_64"


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    lines = [
        str(value)
        for report in terminalreporter.stats.get("passed", [])
        for key, value in getattr(report, "user_properties", [])
        if key == PROPERTY
    ]
    if lines:
        terminalreporter.write_sep("-", "device tarball: aarch64 (qemu) vs x86_64 trt-edge-run")
        for line in sorted(lines):
            terminalreporter.write_line(line)
