"""The target catalog: ids the other areas rely on, fingerprints, and refusing bad data."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from trt_edge.targets import CatalogError, UnknownBackendError, UnknownTargetError, load_catalog
from trt_edge.targets.catalog import parse_catalog

REQUIRED_IDS = {
    "cpu-x86_64",
    "cpu-aarch64",
    "jetson-orin-nano-jp6",
    "jetson-orin-nx-jp6",
    "jetson-agx-orin-jp6",
    "jetson-thor-jp7",
    "x86-ampere",
    "x86-ada",
    "x86-hopper",
    "x86-blackwell",
}


def test_catalog_has_every_required_target() -> None:
    assert set(load_catalog().ids()) >= REQUIRED_IDS


def test_orin_targets_are_jetpack6_sm87_with_tensorrt() -> None:
    for target_id in ("jetson-orin-nano-jp6", "jetson-orin-nx-jp6", "jetson-agx-orin-jp6"):
        t = load_catalog().get(target_id)
        assert (t.kind, t.arch, t.sm, t.cuda, t.tensorrt) == (
            "jetson",
            "aarch64",
            "8.7",
            "12.6",
            "10.3",
        )
        assert t.l4t is not None and t.l4t.startswith("36.")
        assert t.requires_tensorrt and t.builder_image == "jetson-jp6"
        assert t.flash_board and t.flash_tool


def test_cpu_targets_need_no_tensorrt() -> None:
    for target_id in ("cpu-x86_64", "cpu-aarch64"):
        t = load_catalog().get(target_id)
        assert not t.requires_tensorrt and t.tensorrt is None and t.gpu is None
        assert t.builder_image == "cpu" and t.runtime_image == "cpu-runtime"


def test_a_tensorrt_fingerprint_holds_what_decides_engine_compatibility() -> None:
    catalog = load_catalog()
    fp = catalog.fingerprint(catalog.get("jetson-thor-jp7"), "tensorrt")
    assert fp == {
        "id": "jetson-thor-jp7",
        "kind": "jetson",
        "arch": "aarch64",
        "sm": "11.0",
        "jetpack": "7.0",
        "l4t": "38.2",
        "cuda": "13.0",
        "tensorrt": "10.16",
    }
    json.dumps(fp)  # goes into bundle.json as is
    # x86 boxes have no JetPack/L4T: a field the target leaves unset is not asked.
    assert set(catalog.fingerprint(catalog.get("x86-ada"), "tensorrt")) == {
        "id",
        "kind",
        "arch",
        "sm",
        "cuda",
        "tensorrt",
    }


@pytest.mark.parametrize("backend", ["xnnpack", "portable"])
def test_a_cpu_backend_fingerprint_asks_only_the_cpu_architecture(backend: str) -> None:
    """An XNNPACK bundle for an Orin needs no SM, CUDA or TensorRT from a device."""
    catalog = load_catalog()
    for target in catalog:
        fp = catalog.fingerprint(target, backend)
        assert fp == {"id": target.id, "kind": target.kind, "arch": target.arch}


def test_every_field_a_backend_asks_has_a_matching_rule_on_the_device() -> None:
    from trt_edge_runner.agent.facts import RULES

    for needs in load_catalog().backends:
        assert set(needs.fingerprint) <= set(RULES), needs.name


def test_an_unknown_backend_is_bad_input_naming_the_known_ones() -> None:
    catalog = load_catalog()
    with pytest.raises(UnknownBackendError) as info:
        catalog.fingerprint(catalog.get("cpu-x86_64"), "coreml")
    assert info.value.exit_code == 2
    assert "unknown backend 'coreml'" in str(info.value) and "xnnpack" in str(info.value)


def test_device_facts_of_a_target_are_its_whole_stack_with_one_sm() -> None:
    facts = load_catalog().get("x86-ampere").device_facts()
    assert (facts["arch"], facts["sm"], facts["cuda"], facts["jetpack"]) == (
        "x86_64",
        "8.0",
        "13.2",
        None,
    )


def test_multi_sm_family_accepts_each_listed_capability() -> None:
    ampere = load_catalog().get("x86-ampere")
    assert ampere.sm_list() == ("8.0", "8.6")
    assert ampere.accepts_sm("8.6") and not ampere.accepts_sm("8.9")


def test_unknown_target_suggests_the_closest_id() -> None:
    with pytest.raises(UnknownTargetError) as info:
        load_catalog().get("x86-hoper")
    assert str(info.value).startswith("unknown target 'x86-hoper' (did you mean 'x86-hopper'?)")


def test_catalog_refuses_duplicates_and_unknown_fields(tmp_path: Path) -> None:
    doc = json.loads(
        (Path(__file__).resolve().parents[2] / "sdk/trt_edge/targets/catalog.json").read_text()
    )
    first = doc["targets"][0]
    with pytest.raises(CatalogError, match="duplicate target ids"):
        parse_catalog({"targets": [first, first]})
    with pytest.raises(CatalogError, match="unknown fields \\['colour'\\]"):
        parse_catalog({"targets": [{**first, "colour": "green"}]})
    broken = tmp_path / "catalog.json"
    broken.write_text("{")
    with pytest.raises(CatalogError, match=r"catalog\.json:1:2"):
        load_catalog(broken)


def test_every_catalog_image_has_a_folder_under_images() -> None:
    images = Path(__file__).resolve().parents[2] / "images"
    catalog = load_catalog()
    for target in catalog:
        for image in (target.builder_image, target.runtime_image):
            assert (images / image).is_dir(), f"{target.id}: images/{image}/ is missing"
    for needs in catalog.backends:
        if needs.builder_image is not None:
            assert (images / needs.builder_image).is_dir(), needs.name


def test_catalog_refuses_a_backend_asking_a_field_no_device_reports() -> None:
    doc = json.loads(
        (Path(__file__).resolve().parents[2] / "sdk/trt_edge/targets/catalog.json").read_text()
    )
    doc["backends"]["xnnpack"]["fingerprint"] = ["arch", "colour"]
    with pytest.raises(CatalogError, match=r"backends\.xnnpack\.fingerprint"):
        parse_catalog(doc)
