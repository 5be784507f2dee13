"""Fixtures for the device agent tests: keys, a real tiny `.pte`, signed bundle tars, a device."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from agent.signed_bundles import make_signed_tar  # type: ignore[import-not-found]
from runner.tiny_bundles import build_tiny_model, lower_tiny_model  # type: ignore[import-not-found]
from trt_edge.signing import generate_keypair


@dataclass(frozen=True)
class Bundles:
    keys: Path
    key: Path
    v1: Path
    v2: Path
    v2_rebuilt: Path  # 2.0.0 again, other content (another prefill opt shape)
    slow_to_fail: Path  # signed and valid, but its prefill opt shape is beyond the program
    orin: Path  # built for a Jetson Orin Nano: wrong target here
    other_key: Path  # signed by a key the device does not trust
    pte: Path  # the real program every bundle here carries
    other_private: Path  # the untrusted key's private half

    def make(self, out: Path, version: str, key: Path | None = None, **kwargs: Any) -> Path:
        """Another signed tar of the same program (`key` defaults to the trusted one)."""
        return make_signed_tar(out, self.pte, version, key or self.key, **kwargs)


@pytest.fixture(scope="session")
def agent_bundles(tmp_path_factory: pytest.TempPathFactory) -> Bundles:
    root = tmp_path_factory.mktemp("agent-bundles")
    pair = generate_keypair(root / "keys")
    other = generate_keypair(root / "other-keys")
    pte = lower_tiny_model(build_tiny_model(), root / "model.pte")
    trusted = root / "trusted"
    trusted.mkdir()
    (trusted / "publisher.pub").write_bytes(pair.public_path.read_bytes())
    return Bundles(
        keys=trusted,
        key=pair.private_path,
        v1=make_signed_tar(root / "v1", pte, "1.0.0", pair.private_path),
        v2=make_signed_tar(root / "v2", pte, "2.0.0", pair.private_path),
        v2_rebuilt=make_signed_tar(
            root / "v2-rebuilt",
            pte,
            "2.0.0",
            pair.private_path,
            profiles=[("decode", 1, 1, 1), ("prefill", 2, 32, 64)],
        ),
        slow_to_fail=make_signed_tar(
            root / "bad",
            pte,
            "3.0.0-bad",
            pair.private_path,
            profiles=[("decode", 1, 1, 1), ("prefill", 2, 100, 128)],
        ),
        orin=make_signed_tar(
            root / "orin",
            pte,
            "1.0.0-orin",
            pair.private_path,
            target={
                "id": "jetson-orin-nano-jp6",
                "arch": "aarch64",
                "sm": "8.7",
                "jetpack": "6.2",
                "l4t": "36.4.3",
                "cuda": "12.6",
                "tensorrt": "10.3",
            },
        ),
        other_key=make_signed_tar(root / "other", pte, "9.9.9", other.private_path),
        pte=pte,
        other_private=other.private_path,
    )


@dataclass(frozen=True)
class Device:
    """An agent rooted in a temporary directory, driven through the real CLI in a subprocess."""

    root: Path
    keys: Path
    facts: Path
    config: Path

    def env(self) -> dict[str, str]:
        return {
            **os.environ,
            "TRT_EDGE_ROOT": str(self.root),
            "TRT_EDGE_KEYS": str(self.keys),
            "TRT_EDGE_FACTS": str(self.facts),
            "TRT_EDGE_CONFIG": str(self.config),
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


@pytest.fixture
def device(tmp_path: Path, agent_bundles: Bundles) -> Device:
    facts = tmp_path / "facts.json"
    facts.write_text(json.dumps({"arch": "x86_64"}))
    return Device(
        root=tmp_path / "var-lib-trt-edge",
        keys=agent_bundles.keys,
        facts=facts,
        config=tmp_path / "device.json",
    )
