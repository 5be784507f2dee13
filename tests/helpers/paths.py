"""Where the checkout's parts are, for tests that read or run them."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
VECTORS = REPO / "tests" / "vectors"
CPP_SRC = REPO / "device_runner" / "cpp"
DEVICE_TOOLS = CPP_SRC / "tools"
