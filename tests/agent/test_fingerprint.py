"""`fingerprint_mismatches`: a device compares exactly the fields a bundle's fingerprint asks."""

from __future__ import annotations

from trt_edge.targets import load_catalog
from trt_edge_runner.agent.facts import fingerprint_mismatches

CATALOG = load_catalog()
ORIN = CATALOG.get("jetson-orin-nano-jp6")
# What an Orin Nano reports: full version strings where the bundle names a prefix.
ORIN_FACTS = {**ORIN.device_facts(), "jetpack": "6.2.1", "cuda": "12.6.68", "tensorrt": "10.3.0.30"}


def test_only_the_fields_the_bundle_sets_are_compared() -> None:
    cpu_bundle = CATALOG.fingerprint(ORIN, "xnnpack")
    assert fingerprint_mismatches(cpu_bundle, {"arch": "aarch64"}) == []
    assert fingerprint_mismatches(cpu_bundle, {**ORIN_FACTS, "l4t": "35.5.0"}) == []
    assert fingerprint_mismatches(cpu_bundle, {"arch": "x86_64", "sm": "8.9"}) == [
        "arch: bundle needs aarch64, device is x86_64"
    ]


def test_a_tensorrt_bundle_names_every_field_that_does_not_fit() -> None:
    trt_bundle = CATALOG.fingerprint(ORIN, "tensorrt")
    assert fingerprint_mismatches(trt_bundle, ORIN_FACTS) == []
    reasons = fingerprint_mismatches(trt_bundle, {**ORIN_FACTS, "sm": "8.9", "tensorrt": "10.30"})
    assert sorted(reasons) == [
        "sm: bundle's engines are built for compute capability 8.7, device has 8.9",
        "tensorrt: bundle needs 10.3, device has 10.30",
    ]


def test_nulls_id_and_kind_ask_nothing() -> None:
    """Bundles written before fingerprints depended on the backend set unasked fields to null."""
    old_style = {"id": "cpu-x86_64", "kind": "cpu", "arch": "x86_64", "sm": None, "cuda": None}
    assert fingerprint_mismatches(old_style, {"arch": "x86_64"}) == []


def test_a_field_the_agent_has_no_rule_for_is_refused_not_ignored() -> None:
    reasons = fingerprint_mismatches({"arch": "x86_64", "npu": "v2"}, {"arch": "x86_64"})
    assert reasons == [
        "npu: bundle asks for npu 'v2', which this device agent cannot check; update "
        "trt-edge-runner on the device"
    ]


def test_multi_sm_targets_accept_each_listed_capability() -> None:
    ampere = CATALOG.fingerprint(CATALOG.get("x86-ampere"), "tensorrt")
    facts = {"arch": "x86_64", "sm": "8.6", "cuda": "13.2.1", "tensorrt": "11.1.0"}
    assert fingerprint_mismatches(ampere, facts) == []
    assert fingerprint_mismatches(ampere, {**facts, "sm": "8.9"}) == [
        "sm: bundle's engines are built for compute capability 8.0, 8.6, device has 8.9"
    ]
