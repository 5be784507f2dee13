"""The pure rollout planner: eligibility by fingerprint, cumulative waves, the threshold."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from trt_edge.fleet.errors import RolloutError
from trt_edge.fleet.inventory import Device, devices_from_inventory_json, facts_from_hostvars
from trt_edge.fleet.plan import load_plan
from trt_edge.fleet.schedule import cumulative_targets, plan_waves, threshold_crossed

from tests.helpers.targets import ORIN_NANO, device_facts, fingerprint

# What bundles for an Orin Nano ask: a TensorRT one its whole GPU stack, an XNNPACK one its arch.
ORIN = fingerprint(ORIN_NANO, "tensorrt")
ORIN_CPU = fingerprint(ORIN_NANO, "xnnpack")
ORIN_FACTS = device_facts(ORIN_NANO)


def fleet(n: int, facts: dict[str, str] | None = None, group: str = "edge") -> list[Device]:
    return [Device(f"dev{i:05d}", frozenset({"all", group}), facts or ORIN_FACTS) for i in range(n)]


def test_waves_are_cumulative_counts_and_percentages() -> None:
    assert cumulative_targets([1, "10%", "50%", "100%"], 200) == [1, 20, 100, 200]
    assert cumulative_targets([1, "10%", "50%", "100%"], 5) == [1, 1, 3, 5]
    assert cumulative_targets([5, 2, "100%"], 3) == [3, 3, 3]


def test_plan_cuts_waves_in_inventory_order_and_drops_empty_ones() -> None:
    schedule = plan_waves(fleet(5), ORIN, ["edge"], [1, "10%", "50%", "100%"])
    assert [[d.name for d in w] for w in schedule.waves] == [
        ["dev00000"],
        ["dev00001", "dev00002"],
        ["dev00003", "dev00004"],
    ]
    assert schedule.skipped == ()


def test_devices_that_do_not_fit_are_skipped_with_the_reason() -> None:
    devices = [
        *fleet(3),
        Device("nx-old-jetpack", frozenset({"all", "edge"}), {**ORIN_FACTS, "l4t": "35.5.0"}),
        Device("pc", frozenset({"all", "edge"}), {"arch": "x86_64"}),
        Device("unknown", frozenset({"all", "edge"}), None, "no trt_edge_facts"),
        Device("other-group", frozenset({"all", "lab"}), ORIN_FACTS),
    ]
    schedule = plan_waves(devices, ORIN, ["edge"], ["100%"])
    assert schedule.eligible == 3
    reasons = {s.device.name: s.reason for s in schedule.skipped}
    assert set(reasons) == {"nx-old-jetpack", "pc", "unknown"}
    assert f"l4t: bundle needs {ORIN['l4t']}, device has 35.5.0" in reasons["nx-old-jetpack"]
    assert f"arch: bundle needs {ORIN['arch']}, device is x86_64" in reasons["pc"]
    assert f"sm: bundle's engines are built for compute capability {ORIN['sm']}" in reasons["pc"]
    assert reasons["unknown"] == "facts unknown: no trt_edge_facts"


def test_a_cpu_bundle_is_not_kept_off_devices_by_gpu_facts_it_does_not_need() -> None:
    """Other JetPack, no GPU at all: an XNNPACK Orin bundle runs on any aarch64 device."""
    devices = [
        *fleet(2),
        Device("nx-old-jetpack", frozenset({"edge"}), {**ORIN_FACTS, "l4t": "35.5.0"}),
        Device("pi", frozenset({"edge"}), {"arch": "aarch64"}),
        Device("pc", frozenset({"edge"}), {"arch": "x86_64", "sm": "8.9"}),
    ]
    schedule = plan_waves(devices, ORIN_CPU, ["edge"], ["100%"])
    assert schedule.eligible == 4
    [skipped] = schedule.skipped
    assert skipped.device.name == "pc"
    assert skipped.reason == "fingerprint mismatch: arch: bundle needs aarch64, device is x86_64"


@settings(deadline=None, max_examples=60)  # wall-clock free: the machine is shared
@given(st.integers(0, 500), st.lists(st.integers(0, 100), min_size=1, max_size=6))
def test_every_eligible_device_is_in_at_most_one_wave(n: int, percents: list[int]) -> None:
    specs: list[int | str] = [f"{p}%" for p in sorted(percents)]
    schedule = plan_waves(fleet(n), ORIN, ["edge"], specs)
    names = [d.name for wave in schedule.waves for d in wave]
    assert len(names) == len(set(names))
    assert len(names) == cumulative_targets(specs, n)[-1]
    assert all(schedule.waves)


def test_failure_threshold_count_and_percent() -> None:
    assert not threshold_crossed(0, 0, 5)
    assert threshold_crossed(0, 1, 5)
    assert not threshold_crossed(1, 1, 5)
    assert not threshold_crossed("20%", 1, 5)
    assert threshold_crossed("20%", 2, 5)


def test_inventory_groups_nest_and_facts_come_from_a_catalog_target() -> None:
    doc = {
        "_meta": {
            "hostvars": {
                "a": {"trt_edge_target": ORIN_NANO},
                "b": {"trt_edge_facts": {"arch": "x86_64"}},
            }
        },
        "all": {"children": ["ungrouped", "edge"]},
        "edge": {"children": ["canary"], "hosts": ["b"]},
        "canary": {"hosts": ["a"]},
    }
    devices = {d.name: d for d in devices_from_inventory_json(doc)}
    assert devices["a"].groups == {"all", "edge", "canary"}
    assert devices["a"].facts is not None and devices["a"].facts["sm"] == ORIN["sm"]
    assert devices["b"].facts == {"arch": "x86_64"}
    assert facts_from_hostvars({"trt_edge_target": "nope"})[1].startswith("trt_edge_target")


def test_plan_errors_name_file_line_and_field(tmp_path: Path) -> None:
    plan = tmp_path / "plan.yaml"
    plan.write_text("bundle: b.tar\nwaves: [1, '10 percent']\nhealth:\n  runs: 0\n")
    with pytest.raises(RolloutError) as info:
        load_plan(plan)
    message = str(info.value)
    assert f"{plan}:2: waves.1" in message or f"{plan}:2: waves" in message
    assert "'10 percent'" in message
    assert f"{plan}:4: health.runs" in message
