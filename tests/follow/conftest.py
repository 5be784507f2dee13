"""Fixtures of the publish/follow tests: a device agent in a temporary directory, driven
through its CLI. The registries are the session plugin's (`tests/helpers/fixtures_registry.py`)
and the signed tiny bundles `agent_bundles` (`tests/helpers/fixtures_bundles.py`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.agent.device import Device, device_in
from tests.helpers.fixtures_bundles import Bundles


@pytest.fixture
def device(tmp_path: Path, agent_bundles: Bundles, trt_edge_run: Path) -> Device:
    return device_in(tmp_path, agent_bundles.keys, trt_edge_run)
