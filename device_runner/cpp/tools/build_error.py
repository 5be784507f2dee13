"""The one error the device-tarball tools raise for a failure a user can fix.

It carries what failed, where and what to do in its message; `build_device_tarball.main`
prints it as `build_device_tarball: error: ...` and exits 1, so no traceback reaches
someone whose machine lacks a package or whose lock file is wrong.
"""

from __future__ import annotations


class DeviceBuildError(Exception):
    """A device tarball could not be made; the message says why and what to do."""
