"""The memory budget rule, the board memory in the target catalog and /proc/meminfo reading."""

from __future__ import annotations

from pathlib import Path

import pytest
from trt_edge.memory import board_verdicts, over_budget
from trt_edge.targets import load_catalog
from trt_edge_runner.bundle_format import MemorySection
from trt_edge_runner.memory_budget import (
    DEFAULT_HEADROOM_MIB,
    GIB,
    MIB,
    Budget,
    MemInfoError,
    mib,
    read_meminfo,
)

CATALOG = load_catalog()


def needs(total_mib: int) -> MemorySection:
    """A section whose parts add up as the build adds them (weights + planned + runner)."""
    weights, planned, runner = (total_mib - 20) * MIB, 4 * MIB, 16 * MIB
    return MemorySection(weights, planned, MIB, runner, weights + planned + runner)


def test_catalog_carries_each_jetson_boards_memory_and_none_for_x86() -> None:
    expected = {
        "jetson-orin-nano-jp6": (4, 8),
        "jetson-orin-nx-jp6": (8, 16),
        "jetson-agx-orin-jp6": (32, 64),
        "jetson-thor-jp7": (128,),
    }
    for target in CATALOG:
        if target.kind == "jetson":
            assert target.memory_gib == expected[target.id]
        else:
            assert target.memory_gib is None, target.id


def test_a_bundle_between_the_nano_modules_fits_the_8_gib_one_only() -> None:
    nano = CATALOG.get("jetson-orin-nano-jp6")
    bundle = needs(5 * 1024)
    verdicts = {v.memory_gib: v.fits for v in board_verdicts(bundle, nano)}
    assert verdicts == {4: False, 8: True}
    warnings = over_budget(bundle, nano)
    assert len(warnings) == 1
    assert "jetson-orin-nano-jp6 4 GiB" in warnings[0]
    assert "5,120 MiB" in warnings[0]  # what it needs
    assert f"{DEFAULT_HEADROOM_MIB:,} MiB headroom" in warnings[0]
    assert "fits the 8 GiB module" in warnings[0]


def test_headroom_decides_at_the_edge() -> None:
    nano = CATALOG.get("jetson-orin-nano-jp6")
    bundle = needs(8 * 1024 - 512)  # 512 MiB under the 8 GiB module's memory
    roomy = over_budget(bundle, nano, headroom_mib=512)
    assert [w.split(":")[0] for w in roomy] == ["jetson-orin-nano-jp6 4 GiB"]
    assert "fits the 8 GiB module" in roomy[0]
    too_tight = over_budget(bundle, nano, headroom_mib=513)
    assert [w.split(":")[0] for w in too_tight] == [
        "jetson-orin-nano-jp6 4 GiB",
        "jetson-orin-nano-jp6 8 GiB",
    ]
    assert "exceeds it by 1.0 MiB" in too_tight[1]


def test_targets_without_fixed_memory_are_not_judged() -> None:
    huge = needs(10_000 * 1024)
    for target_id in ("cpu-x86_64", "x86-hopper"):
        assert over_budget(huge, CATALOG.get(target_id)) == []


def test_budget_shortfall() -> None:
    budget = Budget(8 * GIB, 1024 * MIB)
    assert budget.usable_bytes == 7 * GIB
    assert budget.shortfall(7 * GIB) == 0
    assert budget.shortfall(7 * GIB + 5) == 5
    assert Budget(MIB, 2 * MIB).usable_bytes == 0


def test_figures_are_shown_in_mib_with_precision_where_it_matters() -> None:
    assert [mib(n) for n in (512 * 1024, 5 * MIB + MIB // 2, 4096 * MIB)] == [
        "512 KiB",
        "5.5 MiB",
        "4,096 MiB",
    ]


def test_read_meminfo_reads_this_machines_proc_meminfo() -> None:
    found = read_meminfo()
    with open("/proc/meminfo", encoding="ascii") as fh:
        first = fh.readline().split()
    assert first[0] == "MemTotal:"
    assert found.total_bytes == int(first[1]) * 1024
    assert found.available_bytes is not None and 0 < found.available_bytes <= found.total_bytes


def test_read_meminfo_refuses_a_file_without_memtotal(tmp_path: Path) -> None:
    broken = tmp_path / "meminfo"
    broken.write_text("MemFree: 100 kB\n")
    with pytest.raises(MemInfoError, match=r"no 'MemTotal: N kB' line") as caught:
        read_meminfo(broken)
    assert caught.value.hint and "--ignore-memory-check" in caught.value.hint
    with pytest.raises(MemInfoError, match="cannot read"):
        read_meminfo(tmp_path / "missing")


HOST = "MemTotal:       16000000 kB\nMemAvailable:   12000000 kB\n"


@pytest.mark.parametrize(
    ("files", "total", "available"),
    [
        # cgroup v2 (unified): limit 4 GiB, 1.5 GiB used of which 0.5 GiB reclaimable cache
        ({"memory.max": f"{4 << 30}\n", "memory.current": f"{3 << 29}\n",
          "memory.stat": f"anon 1\ninactive_file {1 << 29}\n"}, 4 << 30, 3 << 30),
        # cgroup v1 (Docker 20.10 here): limit 2 GiB, 1 GiB used, no cache
        ({"memory/memory.limit_in_bytes": f"{2 << 30}\n",
          "memory/memory.usage_in_bytes": f"{1 << 30}\n",
          "memory/memory.stat": "total_inactive_file 0\n"}, 2 << 30, 1 << 30),
    ],
)  # fmt: skip
def test_a_container_limit_caps_what_the_device_has(
    tmp_path: Path, files: dict[str, str], total: int, available: int
) -> None:
    """Inside a container /proc/meminfo is the host's: the memory cgroup's limit is what the
    bundle may use, and its usage less page cache is what is taken."""
    meminfo = tmp_path / "meminfo"
    meminfo.write_text(HOST)
    cgroup = tmp_path / "cgroup"
    for name, text in files.items():
        (cgroup / name).parent.mkdir(parents=True, exist_ok=True)
        (cgroup / name).write_text(text)
    found = read_meminfo(meminfo, cgroup)
    assert (found.total_bytes, found.available_bytes) == (total, available)
    assert "capped by" in found.source and str(cgroup) in found.source
    # The OS headroom is the host's (the OS and CUDA live outside the cgroup): the whole
    # limit is usable while the host less the headroom is larger, and no more than that.
    host = 16000000 * 1024
    assert found.usable_bytes(1 << 30) == total
    assert found.usable_bytes(host - (1 << 30)) == 1 << 30
    assert found.free_bytes(1 << 30) == available
    assert read_meminfo(meminfo).total_bytes == 16000000 * 1024  # no cgroup root: the file


@pytest.mark.parametrize(
    "files",
    [
        {"memory.max": "max\n"},  # v2 without a limit
        {"memory/memory.limit_in_bytes": "9223372036854771712\n"},  # v1 "unlimited"
        {},  # no memory controller mounted
    ],
)
def test_no_limit_leaves_the_meminfo_figures(tmp_path: Path, files: dict[str, str]) -> None:
    meminfo = tmp_path / "meminfo"
    meminfo.write_text(HOST)
    cgroup = tmp_path / "cgroup"
    cgroup.mkdir()
    for name, text in files.items():
        (cgroup / name).parent.mkdir(parents=True, exist_ok=True)
        (cgroup / name).write_text(text)
    found = read_meminfo(meminfo, cgroup)
    assert (found.total_bytes, found.available_bytes) == (16000000 * 1024, 12000000 * 1024)
    assert found.source == str(meminfo)
    assert found.usable_bytes(1 << 30) == 16000000 * 1024 - (1 << 30)
    assert found.free_bytes(1 << 30) == 12000000 * 1024 - (1 << 30)
