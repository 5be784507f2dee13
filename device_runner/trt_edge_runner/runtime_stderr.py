"""Keep the ExecuTorch runtime's known noise off a user's terminal while a bundle loads.

The runtime writes from C++ straight to file descriptor 2, below Python's
`sys.stderr`, so the only way to hold its lines back is to point fd 2 at a
temporary file for the (short) load and restore it afterwards. Only known noise
is dropped (XNNPACK's CPU probe, `RUNTIME_NOISE`); every other line is written
back. The C++ runner filters the same lines through its ExecuTorch log sink.

Standard library only: this module ships to devices.
"""

from __future__ import annotations

import os
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager

# Set to 1 to see everything the ExecuTorch runtime prints while a bundle loads.
RUNTIME_LOGS_ENV = "TRT_EDGE_RUNTIME_LOGS"
# What XNNPACK's CPU probe prints (via ET_LOG) the first time a method with an
# XNNPACK delegate is loaded: the /sys files it could not read on this machine. It
# is informational, every call, on every x86 box; it drowned the runner's messages.
RUNTIME_NOISE = ("[cpuinfo_utils.cpp:",)


def runtime_logs_wanted(explicit: bool | None = None) -> bool:
    """Whether the runtime's own stderr lines are shown: the flag, else $TRT_EDGE_RUNTIME_LOGS."""
    if explicit is not None:
        return explicit
    return os.environ.get(RUNTIME_LOGS_ENV, "").strip().lower() in ("1", "true", "yes", "on")


_STDERR_CAPTURE_LOCK = threading.Lock()


@contextmanager
def quiet_runtime_stderr(show_all: bool = False) -> Iterator[None]:
    """Hold back the ExecuTorch runtime's known-noise lines on fd 2 for the block.

    Nothing is swallowed but the known XNNPACK CPU-probe lines: every other
    captured line is written back to stderr when the block ends, and everything
    (noise included) when the block raises or `show_all` is set, so a load
    failure still shows what the runtime said. While the block runs, other
    threads' stderr writes are captured and replayed the same way.
    """
    if show_all:
        yield
        return
    sys.stderr.flush()
    # fd 2 is process-wide: two threads opening bundles at once must not save each
    # other's redirection as "the original" (stderr would stay lost), so loads that
    # capture are serialised.
    with _STDERR_CAPTURE_LOCK, tempfile.TemporaryFile() as capture:
        saved = os.dup(2)
        failed = False
        try:
            os.dup2(capture.fileno(), 2)
            try:
                yield
            except BaseException:
                failed = True
                raise
            finally:
                sys.stderr.flush()
                os.dup2(saved, 2)
        finally:
            os.close(saved)
            capture.seek(0)
            lines = capture.read().decode("utf-8", errors="replace").splitlines(keepends=True)
            kept = [ln for ln in lines if failed or not ln.lstrip().startswith(RUNTIME_NOISE)]
            if kept:
                sys.stderr.write("".join(kept))
                sys.stderr.flush()
