"""The checkout's scripts (benchmarks/, which are not packages) imported by the tests that
run their functions."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

from tests.helpers.paths import REPO


def load_benchmark(name: str) -> ModuleType:
    """`benchmarks/<name>.py` as a module (registered under `name`, as its own dataclasses
    need while they are defined)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, REPO / "benchmarks" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
