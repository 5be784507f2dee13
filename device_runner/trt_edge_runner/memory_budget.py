"""How much memory a bundle may use on a machine: one rule for the host's warning and the
device's refusal.

A bundle fits when its `bundle.json` `memory.total_bytes` is at most the machine's memory
less a headroom kept for everything that is not the model: the operating system, the
device agent and service, the CUDA/TensorRT libraries' own allocations on a Jetson (whose
CPU and GPU share one memory) and the page cache. The host compares with a board's
nominal memory from the target catalog; the device with its measured `MemTotal`
(`/proc/meminfo`), which is lower (firmware carve-outs), so install is the stricter check.

Inside a container `/proc/meminfo` shows the host's memory, not the container's: a device
agent in a runtime image with `--memory 4g` on an 8 GB board would judge against 8 GB. So
the figures are capped by the memory cgroup's limit when one is set (v2 `memory.max`,
v1 `memory.limit_in_bytes`), and "available" by the limit less the cgroup's usage without
its reclaimable page cache (what `docker stats` shows).

Only the standard library is used here: this module ships to devices.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from trt_edge_runner.errors import TrtEdgeError

MIB = 1 << 20
GIB = 1 << 30
MEMINFO = Path("/proc/meminfo")
CGROUP_ROOT = Path("/sys/fs/cgroup")
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
    # Set when a container's cgroup capped the figures: the host's own (the OS and CUDA
    # live outside the cgroup, so the headroom is taken from these, not from the limit).
    host_total_bytes: int | None = None
    host_available_bytes: int | None = None

    def usable_bytes(self, headroom_bytes: int) -> int:
        """What a bundle may take: the total less the headroom; in a container its limit,
        unless the host's memory less the headroom is smaller still."""
        if self.host_total_bytes is None:
            return max(self.total_bytes - headroom_bytes, 0)
        return max(min(self.total_bytes, self.host_total_bytes - headroom_bytes), 0)

    def free_bytes(self, headroom_bytes: int) -> int | None:
        """What is free now for one more bundle, on the same rule (None: not reported)."""
        if self.available_bytes is None:
            return None
        if self.host_available_bytes is None:
            return max(self.available_bytes - headroom_bytes, 0)
        return max(min(self.available_bytes, self.host_available_bytes - headroom_bytes), 0)


def read_meminfo(path: Path = MEMINFO, cgroup_root: Path | None = None) -> MemInfo:
    """`MemTotal` and `MemAvailable` from a meminfo file (`NAME: VALUE kB` lines), capped by
    the memory cgroup under `cgroup_root` when it sets a limit (None: not looked at — a
    `--meminfo FILE` given on purpose says everything)."""
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
    found = MemInfo(values["MemTotal"], values.get("MemAvailable"), str(path))
    limit = cgroup_limit(cgroup_root) if cgroup_root is not None else None
    if limit is None or limit.limit_bytes >= found.total_bytes:
        return found
    free = max(limit.limit_bytes - limit.used_bytes, 0)
    available = free if found.available_bytes is None else min(found.available_bytes, free)
    return MemInfo(
        limit.limit_bytes,
        available,
        f"{path} capped by {limit.source}",
        host_total_bytes=found.total_bytes,
        host_available_bytes=found.available_bytes,
    )


def device_memory(meminfo: Path = MEMINFO) -> MemInfo:
    """What this device has: `/proc/meminfo` capped by its memory cgroup, or exactly what
    another file says (`--meminfo FILE`, given on purpose)."""
    return read_meminfo(meminfo, CGROUP_ROOT if meminfo == MEMINFO else None)


@dataclass(frozen=True)
class CgroupLimit:
    """The memory cgroup's limit and its usage less reclaimable page cache, in bytes."""

    limit_bytes: int
    used_bytes: int
    source: str


def cgroup_limit(root: Path = CGROUP_ROOT) -> CgroupLimit | None:
    """The limit of the memory cgroup this process sees under `root` (v2 unified or v1
    `memory/`), or None when there is none, it is unlimited or cannot be read."""
    layouts = (
        (root / "memory.max", root / "memory.current", "inactive_file"),
        (root / "memory" / "memory.limit_in_bytes", root / "memory" / "memory.usage_in_bytes",
         "total_inactive_file"),
    )  # fmt: skip
    for limit_file, usage_file, cache_key in layouts:
        try:
            raw = limit_file.read_text("ascii").strip()
        except OSError:
            continue
        if not raw.isdigit():  # v2 "max": no limit
            return None
        try:
            usage = int(usage_file.read_text("ascii").strip())
        except (OSError, ValueError):
            usage = 0
        cache = _stat_value(limit_file.parent / "memory.stat", cache_key)
        return CgroupLimit(int(raw), max(usage - cache, 0), str(limit_file))
    return None


def _stat_value(path: Path, key: str) -> int:
    """One `KEY VALUE` line of a cgroup's `memory.stat` (0 when absent or unreadable)."""
    try:
        lines = path.read_text("ascii").splitlines()
    except OSError:
        return 0
    for line in lines:
        name, _, value = line.partition(" ")
        if name == key and value.strip().isdigit():
            return int(value)
    return 0


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
