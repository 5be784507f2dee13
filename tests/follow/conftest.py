"""Fixtures of the publish/follow tests: a device agent in a temporary directory, driven
through its CLI. The registries are the session plugin's (`tests/helpers/fixtures_registry.py`)
and the signed tiny bundles `agent_bundles` (`tests/helpers/fixtures_bundles.py`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.agent.device import Device
from tests.helpers.fixtures_bundles import Bundles


@pytest.fixture
def device(tmp_path: Path, agent_bundles: Bundles, trt_edge_run: Path) -> Device:
    facts = tmp_path / "facts.json"
    facts.write_text(json.dumps({"arch": "x86_64"}))
    return Device(
        root=tmp_path / "var-lib-trt-edge",
        keys=agent_bundles.keys,
        facts=facts,
        config=tmp_path / "device.json",
        runner=trt_edge_run,
    )
