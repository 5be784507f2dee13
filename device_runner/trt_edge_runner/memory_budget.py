"""How much memory a bundle may use on a machine: one rule for the host's warning and the
device's refusal.

A bundle fits when its `bundle.json` `memory.total_bytes` is at most the machine's memory
less a headroom kept for everything that is not the model: the operating system, the
device agent and service, the CUDA/TensorRT libraries' own allocations on a Jetson (whose
CPU and GPU share one memory) and the page cache. The host compares with a board's
nominal memory from the target catalog; the device with its measured `MemTotal`
(`/proc/meminfo`), which is lower (firmware carve-outs), so install is the stricter check.

Only the standard library is used here: this module ships to devices.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from trt_edge_runner.errors import TrtEdgeError

MIB = 1 << 20
GIB = 1 << 30
MEMINFO = Path("/proc/meminfo")
# The default headroom, a judgement rather than a measurement: a headless Jetson Linux
# with the agent, the service and the CUDA/TensorRT libraries mapped commonly takes a few
# hundred MiB to about 1 GiB before any model is loaded; 1 GiB keeps a bundle that fits
# from pushing the board into swap or the OOM killer. Set it per manifest
# (`build.memory_headroom_mib`) or per command (`--memory-headroom-mib`).
DEFAULT_HEADROOM_MIB = 1024
HEADROOM_REASON = (
    "room for the OS, the agent and service, the CUDA/TensorRT libraries and the page cache"
)


class MemInfoError(TrtEdgeError):
    """`/proc/meminfo` (or the file given instead) cannot be read or has no MemTotal."""


@dataclass(frozen=True)
class MemInfo:
    """The figures of `/proc/meminfo` the check uses, in bytes, and the file they came from."""

    total_bytes: int
    available_bytes: int | None
    source: str


def read_meminfo(path: Path = MEMINFO) -> MemInfo:
    """`MemTotal` and `MemAvailable` from a meminfo file (`NAME: VALUE kB` lines)."""
    try:
        text = path.read_text("ascii", errors="replace")
    except OSError as exc:
        raise MemInfoError(
            f"{path}: cannot read the device's memory: {exc.strerror}",
            hint="pass --ignore-memory-check to install without the memory check",
        ) from None
    values: dict[str, int] = {}
    for line in text.splitlines():
        name, _, rest = line.partition(":")
        parts = rest.split()
        if parts and parts[0].isdigit():
            unit = parts[1] if len(parts) > 1 else ""
            values[name.strip()] = int(parts[0]) * (1024 if unit == "kB" else 1)
    if "MemTotal" not in values:
        raise MemInfoError(
            f"{path}: no 'MemTotal: N kB' line; cannot tell how much memory this device has",
            hint="pass --ignore-memory-check to install without the memory check",
        )
    return MemInfo(values["MemTotal"], values.get("MemAvailable"), str(path))


@dataclass(frozen=True)
class Budget:
    """`capacity_bytes` of memory of which `headroom_bytes` stay free for everything else."""

    capacity_bytes: int
    headroom_bytes: int

    @property
    def usable_bytes(self) -> int:
        return max(self.capacity_bytes - self.headroom_bytes, 0)

    def shortfall(self, needed_bytes: int) -> int:
        """How many bytes `needed_bytes` is over the usable memory (0 when it fits)."""
        return max(needed_bytes - self.usable_bytes, 0)


def mib(n_bytes: int) -> str:
    """`1,234 MiB` (`9.5 MiB`, `512 KiB` for small figures): every memory message's unit."""
    if n_bytes < MIB:
        return f"{n_bytes / 1024:,.0f} KiB"
    if n_bytes < 10 * MIB:
        return f"{n_bytes / MIB:.1f} MiB"
    return f"{n_bytes / MIB:,.0f} MiB"
