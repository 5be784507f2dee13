"""Shared pytest set-up. Fixtures live in plugin modules beside this file, one per area,
so that areas can grow their fixtures without editing a shared file."""

pytest_plugins = [
    "fixtures_bundles",
    "fixtures_docker",
    "fixtures_runner",
    "summary_device_tarball",
]
