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
