"""A device agent rooted in a temporary directory, driven through its real CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Device:
    """An agent rooted in a temporary directory, driven through the real CLI in a subprocess,
    executing bundles with the real C++ runner (found through $TRT_EDGE_RUNNER)."""

    root: Path
    keys: Path
    facts: Path
    config: Path
    runner: Path

    def env(self) -> dict[str, str]:
        return {
            **os.environ,
            "TRT_EDGE_ROOT": str(self.root),
            "TRT_EDGE_KEYS": str(self.keys),
            "TRT_EDGE_FACTS": str(self.facts),
            "TRT_EDGE_CONFIG": str(self.config),
            "TRT_EDGE_RUNNER": str(self.runner),
        }

    def cli(self, *args: str, extra_env: dict[str, str] | None = None) -> list[str]:
        return [sys.executable, "-m", "trt_edge_runner.device_cli", *args]

    def run(
        self, *args: str, check: bool = False, extra_env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(
            self.cli(*args),
            env={**self.env(), **(extra_env or {})},
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        if check:
            assert result.returncode == 0, result.stdout + result.stderr
        return result

    def status(self) -> dict[str, object]:
        result = self.run("status", "--json", check=True)
        doc: dict[str, object] = json.loads(result.stdout)
        return doc

    def popen(self, args: Sequence[str], extra_env: dict[str, str]) -> subprocess.Popen[str]:
        return subprocess.Popen(
            self.cli(*args),
            env={**self.env(), **extra_env},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )


def device_in(folder: Path, keys: Path, runner: Path, root: str = "var-lib-trt-edge") -> Device:
    """A device agent in `folder`: its root `folder/root`, an x86_64 facts file, a device.json
    path (not written: defaults until a test writes one), `keys` trusted, bundles run by
    `runner` (every agent test's, follow test's and pull test's device)."""
    folder.mkdir(parents=True, exist_ok=True)
    facts = folder / "facts.json"
    facts.write_text(json.dumps({"arch": "x86_64"}))
    return Device(
        root=folder / root, keys=keys, facts=facts, config=folder / "device.json", runner=runner
    )
