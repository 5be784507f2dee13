"""Running vectors files through the Python and C++ conformance entry points (policy tests)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

# The conformance binaries that need no ExecuTorch SDK (the dtype one does: tests/runner).
SDK_FREE_BINARIES = (
    "trt_edge_conformance",
    "trt_edge_bundle_conformance",
    "trt_edge_bundle_document_conformance",
)


def python_runner(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "trt_edge_runner.conformance", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )


def cpp_runner(binary: Path, path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(binary), str(path)], capture_output=True, text=True, check=False)
