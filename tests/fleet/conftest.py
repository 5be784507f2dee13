"""Fleet test fixtures: the agent tests' signed bundles (shared, built once per session), and
the device tarballs `trt-edge flash` stages (the device tarball tests' fixtures)."""

from agent.conftest import agent_bundles  # type: ignore[import-not-found]  # noqa: F401
from device_tarball.conftest import (  # type: ignore[import-not-found]  # noqa: F401
    aarch64_tarball,
    arm64_openssl_libdir,
    x86_64_tarball,
)
