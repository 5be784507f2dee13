"""`trt-edge --help` imports every CLI module: run/generate/bench must stay cheap to import."""

from __future__ import annotations

import json
import subprocess
import sys

# What costs real time at import (standard-library modules do not: they are imported at the
# top of a module, tests/lint/test_imports.py).
HEAVY = {"torch", "executorch", "numpy", "matplotlib"}

# Records what importing the three modules adds, after the CLI's own entry point.
PROBE = """
import sys
import trt_edge.cli.main
before = set(sys.modules)
import trt_edge.cli.bench, trt_edge.cli.generate, trt_edge.cli.run
added = sorted(set(sys.modules) - before)
import json
print(json.dumps(added))
"""


def test_runner_cli_modules_import_nothing_only_run_needs() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, timeout=120
    )
    added = set(json.loads(proc.stdout))
    assert "trt_edge.cli.bench" in added  # the probe measured something
    assert not added & HEAVY, sorted(added & HEAVY)
