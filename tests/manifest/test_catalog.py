"""The target catalog: ids the other areas rely on, fingerprints, and refusing bad data."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from trt_edge.targets import CatalogError, UnknownTargetError, load_catalog
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


def test_fingerprint_holds_what_decides_engine_compatibility() -> None:
    fp = load_catalog().get("jetson-thor-jp7").fingerprint()
    assert fp["id"] == "jetson-thor-jp7" and fp["jetpack"] == "7.0" and fp["arch"] == "aarch64"
    assert set(fp) == {"id", "kind", "arch", "sm", "jetpack", "l4t", "cuda", "tensorrt"}
    json.dumps(fp)  # goes into bundle.json as is


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
    for target in load_catalog():
        for image in (target.builder_image, target.runtime_image):
            assert (images / image).is_dir(), f"{target.id}: images/{image}/ is missing"
