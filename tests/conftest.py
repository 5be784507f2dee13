"""Shared pytest set-up: the plugin modules of `tests/helpers` whose fixtures every area
sees. A fixture one area uses lives in that area's conftest.py; one that several areas
use lives in a `tests/helpers/fixtures_*.py` module listed here (see tests/README.md)."""

pytest_plugins = [
    "tests.helpers.fixtures_bundles",
    "tests.helpers.fixtures_device_tarball",
    "tests.helpers.fixtures_docker",
    "tests.helpers.fixtures_registry",
    "tests.helpers.fixtures_runner",
    "tests.helpers.summary_device_tarball",
]
