"""Fixtures for the device agent tests: a device agent in a temp dir, driven through its CLI.

The signed bundles it installs are the session fixture `agent_bundles`
(tests/helpers/fixtures_bundles.py), shared with the fleet tests.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.agent.device import Device, device_in
from tests.helpers.fixtures_bundles import Bundles


@pytest.fixture
def device(tmp_path: Path, agent_bundles: Bundles, trt_edge_run: Path) -> Device:
    return device_in(tmp_path, agent_bundles.keys, trt_edge_run)
