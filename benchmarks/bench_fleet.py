"""Planning a rollout over a 10,000-device inventory (fingerprint matching + waves); goal < 1 s.

Measured side by side in one run: 1,000 vs 10,000 devices (linear scaling is the
expectation), the inventory-to-devices conversion of `ansible-inventory --list`
JSON, and the planner alone. Run: `.venv/bin/python benchmarks/bench_fleet.py`.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from timing import median_seconds
from trt_edge.fleet.inventory import devices_from_inventory_json
from trt_edge.fleet.schedule import plan_waves
from trt_edge.targets import load_catalog

ORIN_NANO = "jetson-orin-nano-jp6"
_CATALOG = load_catalog()
# A TensorRT bundle's target, as a build records it, and what such a device reports.
ORIN = _CATALOG.fingerprint(_CATALOG.get(ORIN_NANO), "tensorrt")
DEVICE_FACTS = {
    k: v for k, v in _CATALOG.get(ORIN_NANO).device_facts().items() if k not in ("id", "kind")
}
# Devices that fit (by catalog target, or by facts with a patch-level TensorRT), an Orin on an
# older JetPack, an x86 GPU box with the same CUDA/TensorRT, another Orin family member.
FLEET_MIX: list[dict[str, Any]] = [
    {"trt_edge_target": ORIN_NANO},
    {"trt_edge_facts": {**DEVICE_FACTS, "tensorrt": f"{ORIN['tensorrt']}.0.30"}},
    {"trt_edge_facts": {"arch": "aarch64", "sm": ORIN["sm"], "jetpack": "5.1.3", "l4t": "35.5.0"}},
    {
        "trt_edge_facts": {
            "arch": "x86_64",
            "sm": "8.9",
            "cuda": ORIN["cuda"],
            "tensorrt": ORIN["tensorrt"],
        }
    },
    {"trt_edge_target": "jetson-orin-nx-jp6"},
]
WAVES: list[int | str] = [1, "1%", "10%", "50%", "100%"]


def inventory(n: int) -> dict[str, Any]:
    """`ansible-inventory --list`-shaped JSON: 4 site groups under `edge`, mixed facts."""
    names = [f"device-{i:05d}" for i in range(n)]
    doc: dict[str, Any] = {
        "_meta": {"hostvars": {h: FLEET_MIX[i % len(FLEET_MIX)] for i, h in enumerate(names)}},
        "all": {"children": ["ungrouped", "edge"]},
        "edge": {"children": [f"site{s}" for s in range(4)]},
    }
    for s in range(4):
        doc[f"site{s}"] = {"hosts": names[s::4]}
    return doc


def main() -> None:
    results: dict[int, tuple[float, float, int, int]] = {}
    for n in (1_000, 10_000):
        doc = inventory(n)
        devices = devices_from_inventory_json(doc)
        load_s = median_seconds(partial(devices_from_inventory_json, doc), 5)
        plan_s = median_seconds(partial(plan_waves, devices, ORIN, ["edge"], WAVES), 5)
        schedule = plan_waves(devices, ORIN, ["edge"], WAVES)
        results[n] = (load_s, plan_s, schedule.eligible, len(schedule.skipped))
    for n, (load_s, plan_s, eligible, skipped) in results.items():
        print(
            f"{n:>6} devices: inventory->devices {load_s * 1000:7.1f} ms, "
            f"plan (fingerprints + waves) {plan_s * 1000:7.1f} ms, "
            f"{eligible} eligible / {skipped} skipped"
        )
    plan_10k = results[10_000][1]
    total_10k = sum(results[10_000][:2])
    print(f"10k planning vs 1 s goal: {plan_10k:.3f} s ({plan_10k:.0%} of the budget)")
    print(f"10k inventory conversion + planning: {total_10k:.3f} s")
    if plan_10k >= 1.0:
        raise SystemExit("planning 10,000 devices took >= 1 s: goal missed")


if __name__ == "__main__":
    main()
