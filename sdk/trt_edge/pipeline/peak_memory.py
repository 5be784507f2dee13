"""Peak resident memory per build stage, and giving freed memory back between stages.

A real-size model's build is bounded by memory, not time: the stage that holds the
most copies of the weights at once decides whether it fits. So each stage's peak
RSS is measured on its own — Linux resets the process's high-water mark (`VmHWM`)
when "5" is written to `/proc/self/clear_refs` — and reported beside its time.
Elsewhere (no `/proc`, or a kernel that refuses the reset) the figure is the
process's peak so far (`getrusage`), never lower than the truth; `peak_is_per_stage`
says which one was measured. Standard library only: the CLI reads these figures
without torch.

`release_memory` runs the garbage collector and asks glibc to return freed heap
pages to the system (`malloc_trim`): the weights a stage let go of are otherwise kept
by the allocator and count toward the next stage's peak.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import resource
import sys
from pathlib import Path

_STATUS = Path("/proc/self/status")
_CLEAR_REFS = Path("/proc/self/clear_refs")


def _status_bytes(field: str) -> int | None:
    try:
        text = _STATUS.read_text(encoding="ascii")
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024  # reported in kB
    return None


def reset_peak() -> bool:
    """Start a new peak measurement; False where only the process-wide peak is known."""
    try:
        _CLEAR_REFS.write_text("5", encoding="ascii")
    except OSError:
        return False
    return True


def peak_rss_bytes() -> int:
    """The peak RSS since the last successful `reset_peak` (else since the process began)."""
    hwm = _status_bytes("VmHWM")
    if hwm is not None:
        return hwm
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024  # bytes on macOS, kB on Linux


def release_memory() -> None:
    """Collect garbage and hand the heap's free pages back to the system (glibc only)."""
    gc.collect()
    name = ctypes.util.find_library("c")
    if name is None:
        return
    try:
        libc = ctypes.CDLL(name)
        trim = libc.malloc_trim
    except (OSError, AttributeError):
        return
    trim.argtypes = [ctypes.c_size_t]
    trim(0)
