"""What more than one test area uses.

Plain modules (`paths`, `bundles`, `targets`, `session_builds`) are imported by their full
name (`from tests.helpers.bundles import write_bundle`). The `fixtures_*` modules and
`summary_device_tarball` are pytest plugins: `tests/conftest.py` registers them once, so
their fixtures are visible to every area without an import.
"""
